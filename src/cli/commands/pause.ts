// `rollgate pause NAME`: pause a rollout (spec.paused = true).
import type { Command } from 'commander';
import { registerRolloutVerb } from './rollout-verb.ts';

export function registerPauseCommand(program: Command): void {
  registerRolloutVerb(program, {
    name: 'pause',
    description: 'pause a rollout (spec.paused = true)',
    act: async (clients, key, flags) => {
      const { pauseRollout } = await import('../../views/rollout-commands.ts');
      return pauseRollout(clients, key, flags);
    },
  });
}
