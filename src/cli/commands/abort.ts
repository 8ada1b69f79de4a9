// `rollgate abort NAME`: abort a rollout: send all traffic to stable and scale the canary down.
import type { Command } from 'commander';
import { registerRolloutVerb } from './rollout-verb.ts';

export function registerAbortCommand(program: Command): void {
  registerRolloutVerb(program, {
    name: 'abort',
    description: 'abort a rollout: send all traffic to stable and scale the canary down',
    act: async (clients, key, flags) => {
      const { abortRollout } = await import('../../views/rollout-commands.ts');
      return abortRollout(clients, key, flags);
    },
  });
}
