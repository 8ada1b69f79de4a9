// `rollgate pause NAME`: pause a rollout (spec.paused = true).
import type { Command } from 'commander';
import { pauseRollout } from '../../kube/rollout-commands.ts';
import { registerRolloutVerb } from './rollout-verb.ts';

export function registerPauseCommand(program: Command): void {
  registerRolloutVerb(program, {
    name: 'pause',
    description: 'pause a rollout (spec.paused = true)',
    act: (clients, key) => pauseRollout(clients, key),
  });
}
