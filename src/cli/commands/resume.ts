// `rollgate resume NAME`: resume a paused rollout (spec.paused = false).
import type { Command } from 'commander';
import { resumeRollout } from '../../kube/rollout-commands.ts';
import { registerRolloutVerb } from './rollout-verb.ts';

export function registerResumeCommand(program: Command): void {
  registerRolloutVerb(program, {
    name: 'resume',
    description: 'resume a paused rollout (spec.paused = false)',
    act: (clients, key) => resumeRollout(clients, key),
  });
}
