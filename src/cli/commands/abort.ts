// `rollgate abort NAME`: abort a rollout: send all traffic to stable and scale the canary down.
import type { Command } from 'commander';
import { abortRollout } from '../../kube/rollout-commands.ts';
import { registerRolloutVerb } from './rollout-verb.ts';

export function registerAbortCommand(program: Command): void {
  registerRolloutVerb(program, {
    name: 'abort',
    description: 'abort a rollout: send all traffic to stable and scale the canary down',
    act: (clients, key) => abortRollout(clients, key),
  });
}
