// `rollgate restart NAME`: replace the rollout's pods (spec.restartAt = now), as Argo's plugin does.
import type { Command } from 'commander';
import { systemClock } from '../../clock/clock.ts';
import { registerRolloutVerb } from './rollout-verb.ts';

export function registerRestartCommand(program: Command): void {
  registerRolloutVerb(program, {
    name: 'restart',
    description: 'restart the pods of a rollout (sets spec.restartAt to now)',
    act: async (clients, key, flags) => {
      const { restartRollout } = await import('../../views/rollout-commands.ts');
      return restartRollout(clients, key, systemClock, flags);
    },
  });
}
