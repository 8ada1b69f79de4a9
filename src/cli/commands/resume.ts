// `rollgate resume NAME`: resume a paused rollout (spec.paused = false).
import type { Command } from 'commander';
import { registerRolloutVerb } from './rollout-verb.ts';

export function registerResumeCommand(program: Command): void {
  registerRolloutVerb(program, {
    name: 'resume',
    description: 'resume a paused rollout (spec.paused = false)',
    act: async (clients, key, flags) => {
      const { resumeRollout } = await import('../../views/rollout-commands.ts');
      return resumeRollout(clients, key, flags);
    },
  });
}
