// `rollgate status NAME [-n NS] [--group GROUP] [--output text|json] [--watch]`: where a rollout stands and why.
import { Option, type Command } from 'commander';
import { systemClock } from '../../clock/clock.ts';
import { DRIVEN_GROUPS, type DrivenGroup } from '../../manifest/driven-api.ts';
import type { KubeClients, KubeConnection } from '../../kube/client.ts';
import type { ObjectReadClients } from '../../kube/object-read-clients.ts';
import type * as RolloutViewModule from '../../views/rollout-view.ts';
import type { RolloutView } from '../../views/rollout-view.ts';
import type { RolloutKey } from '../../reconciler/observed-state-reader.ts';
import type { RouteReading } from '../../views/route-weights-view.ts';
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

/** How often --watch re-reads the rollout. */
const WATCH_INTERVAL_MS = 2_000;

interface StatusOptions extends KubeFlags, ClusterFlags {
  output: 'text' | 'json';
  watch?: boolean;
  group?: DrivenGroup;
}

/** The view module (and through it @kubernetes/client-node), loaded only when status runs. */
type ViewModule = typeof RolloutViewModule;

/**
 * How status reads a routed rollout's route objects: the provider table's targets, read by a RouteWriter
 * (reads only). Loaded, with client-node, only for a rollout that has trafficRouting, and once.
 */
function routeReading(connect: () => Promise<KubeClients>): () => Promise<RouteReading> {
  let reading: Promise<RouteReading> | undefined;
  return () =>
    (reading ??= (async () => {
      const [clients, { RouteWriter }, { routeTargetsOf }] = await Promise.all([
        connect(),
        import('../../reconciler/route-writer.ts'),
        import('../../process/traffic-router-factory.ts'),
      ]);
      return { reader: new RouteWriter(clients), targetsOf: routeTargetsOf };
    })());
}

function render(views: ViewModule, view: RolloutView, output: 'text' | 'json'): string {
  return output === 'json' ? `${JSON.stringify(view, null, 2)}\n` : views.formatRolloutView(view);
}

async function watchRollout(
  views: ViewModule,
  clients: ObjectReadClients,
  key: RolloutKey,
  output: 'text' | 'json',
  routing: () => Promise<RouteReading>,
  group: DrivenGroup | undefined,
): Promise<void> {
  let last = '';
  let stopped = false;
  const stop = (): void => {
    stopped = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    while (!stopped) {
      const view = await views.readRolloutView(clients, key, systemClock.now(), routing, group);
      const text =
        view === undefined ? `rollout ${key.namespace}/${key.name} not found\n` : render(views, view, output);
      if (text !== last) {
        process.stdout.write(output === 'text' && last !== '' ? `\n${text}` : text);
        last = text;
      }
      await new Promise((resolve) => setTimeout(resolve, WATCH_INTERVAL_MS));
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

export function registerStatusCommand(program: Command): void {
  const command = program
    .command('status')
    .description(
      'show a rollout: steps (current marked), weights (each route object as read back, drift marked), ReplicaSets, failing pods, pauses, analysis',
    )
    .argument('<name>', 'rollout name')
    .option(NAMESPACE_FLAG, NAMESPACE_HELP)
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('-w, --watch', 'keep printing the status whenever it changes (Ctrl-C to stop)')
    .addOption(
      new Option(
        '--group <group>',
        "the Rollout's API group (default: whichever of rollgate.dev and argoproj.io has it)",
      ).choices(DRIVEN_GROUPS),
    )
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP);
  addClusterOptions(command).action(async (name: string, options: StatusOptions) => {
    // A simple kubeconfig is read without client-node (plain-kube-clients.ts); --cluster and every other
    // kubeconfig go through it.
    const [{ openPlainKubeClients }, views] = await Promise.all([
      import('../plain-kube-clients.ts'),
      import('../../views/rollout-view.ts'),
    ]);
    const plain = openPlainKubeClients(options);
    // client-node's connection: the command's own without a plain one, else only a routed rollout's.
    let connection: Promise<KubeConnection> | undefined;
    const connect = (): Promise<KubeConnection> =>
      (connection ??= import('../cluster-flag.ts').then(({ connectNamedCluster }) =>
        connectNamedCluster('status', options),
      ));
    try {
      const { clients, namespace } = plain === undefined ? await connect() : { clients: plain, ...plain };
      const routing = routeReading(async () => (await connect()).clients);
      const key = { namespace, name };
      if (options.watch)
        return await watchRollout(views, clients, key, options.output, routing, options.group);
      const view = await views.readRolloutView(clients, key, systemClock.now(), routing, options.group);
      if (view === undefined) {
        process.stderr.write(`rollgate: rollout ${namespace}/${name} not found\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(render(views, view, options.output));
    } finally {
      plain?.close();
    }
  });
}
