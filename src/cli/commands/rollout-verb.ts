// What every one-rollout verb shares (abort, pause, promote, restart, resume, retry): a rollout name,
// -n and --kubeconfig, one call into kube/rollout-commands, and its summary on stdout.
import { Option, type Command } from 'commander';
import { DRIVEN_GROUPS, type DrivenGroup } from '../../manifest/driven-api.ts';
import type { RolloutKey } from '../../reconciler/rollout-key.ts';
import type { RolloutCommandResult, RolloutVerbClients } from '../../views/rollout-commands.ts';
import {
  CONTEXT_FLAG,
  CONTEXT_HELP,
  KUBECONFIG_FLAG,
  KUBECONFIG_HELP,
  NAMESPACE_FLAG,
  NAMESPACE_HELP,
  type KubeFlags,
} from '../kube-flags.ts';
import { addClusterOptions, type ClusterFlags } from '../cluster-flag.ts';

/** `--group`: which API group the Rollout is in, when its name is in both (see findRollout). */
export interface GroupFlag {
  group?: DrivenGroup;
}

export interface RolloutVerb<F extends KubeFlags> {
  name: string;
  description: string;
  /** Adds the verb's own flags (shown between -n and --kubeconfig). */
  flags?: (command: Command) => void;
  /** Loads what it calls with `await import()`, so `--help` and the other verbs never pay for it. */
  act: (clients: RolloutVerbClients, key: RolloutKey, flags: F & GroupFlag) => Promise<RolloutCommandResult>;
}

/** Registers `rollgate <verb> NAME [-n NS] [--kubeconfig FILE]`. */
export function registerRolloutVerb<F extends KubeFlags>(program: Command, verb: RolloutVerb<F>): void {
  const command = program
    .command(verb.name)
    .description(verb.description)
    .argument('<name>', 'rollout name')
    .option(NAMESPACE_FLAG, NAMESPACE_HELP);
  verb.flags?.(command);
  command
    .addOption(
      new Option(
        '--group <group>',
        "the Rollout's API group (default: whichever of rollgate.dev and argoproj.io has it)",
      ).choices(DRIVEN_GROUPS),
    )
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP);
  addClusterOptions(command).action(async (name: string, flags: F & GroupFlag & ClusterFlags) => {
    // @kubernetes/client-node is most of a verb's start-up: a simple kubeconfig (a token, a client
    // certificate) is served without it; --cluster and every other kubeconfig go through it.
    if (flags.cluster === undefined) {
      const { readSimpleKubeconfig } = await import('../../kube/simple-kubeconfig.ts');
      const simple = readSimpleKubeconfig(flags);
      if (simple !== undefined) {
        const { openCustomObjectClient } = await import('../../kube/custom-object-client.ts');
        // undefined: a file the kubeconfig names cannot be read, client-node's error to give.
        const custom = openCustomObjectClient(simple);
        if (custom !== undefined) {
          try {
            const result = await verb.act({ custom }, { namespace: simple.namespace, name }, flags);
            process.stdout.write(`${result.summary}\n`);
          } finally {
            custom.close();
          }
          return;
        }
      }
    }
    const { connectNamedCluster } = await import('../cluster-flag.ts');
    const { clients, namespace } = await connectNamedCluster(verb.name, flags);
    const result = await verb.act(clients, { namespace, name }, flags);
    process.stdout.write(`${result.summary}\n`);
  });
}
