// `rollgate retry NAME`: retry an aborted rollout: clear the abort and restart its steps.
import type { Command } from 'commander';
import { registerRolloutVerb } from './rollout-verb.ts';

export function registerRetryCommand(program: Command): void {
  registerRolloutVerb(program, {
    name: 'retry',
    description: 'retry an aborted rollout: clear the abort and restart its steps',
    act: async (clients, key, flags) => {
      const { retryRollout } = await import('../../views/rollout-commands.ts');
      return retryRollout(clients, key, flags);
    },
  });
}
