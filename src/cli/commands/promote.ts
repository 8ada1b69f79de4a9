// `rollgate promote NAME [--full]`: resume a paused canary or skip its current step (Argo's plugin patch).
import type { Command } from 'commander';
import type { KubeFlags } from '../kube-flags.ts';
import { registerRolloutVerb } from './rollout-verb.ts';

export function registerPromoteCommand(program: Command): void {
  registerRolloutVerb<KubeFlags & { full?: boolean }>(program, {
    name: 'promote',
    description:
      'promote a rollout: clear its pause, or skip the current step; --full skips all remaining steps',
    flags: (command) =>
      command.option('--full', 'promote to 100% now, skipping the remaining steps and analysis'),
    act: async (clients, key, flags) => {
      const { promoteRollout } = await import('../../views/rollout-commands.ts');
      return promoteRollout(clients, key, { full: flags.full === true, group: flags.group });
    },
  });
}
