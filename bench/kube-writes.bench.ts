// Issue 37: Rollgate's CPU per API write of the reconciler's hot path (a ReplicaSet merge patch, the
// Rollout's status replace), over client-node and over the plain path (src/kube/plain-write-clients.ts),
// beside a floor: node:http on a keep-alive agent with JSON.stringify and JSON.parse and nothing else. The
// sandbox runs in a child process, so this process's CPU (process.cpuUsage) is the client's alone.
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import {
  createKubeClients,
  FIELD_MANAGER,
  MERGE_PATCH,
  observeKubeRequests,
  type KubeClients,
} from '../src/kube/client.ts';
import { installCrds } from '../src/kube/install-crds.ts';
import { rollgateCrds } from '../src/manifest/crds.ts';
import { sandboxKubeConfig } from '../src/sandbox/sandbox-kubeconfig.ts';
import { testRollout } from '../test/integration/reconcile/reconcile-harness.ts';
import type { BenchResult } from './run.ts';
import { startSandboxInChild } from './sandbox-process.ts';
import { median } from './stats.ts';

const ROLLOUTS = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts' } as const;
/** Calls per path and kind (env ROLLGATE_BENCH_KUBE_WRITES_N), in ROUNDS interleaved rounds. */
const CALLS = Number(process.env.ROLLGATE_BENCH_KUBE_WRITES_N ?? 2000);
const ROUNDS = 8;

type Write = (i: number) => Promise<void>;
type Path = 'client-node' | 'plain' | 'floor';

/** The two writes on `clients`, in one namespace of their own: a ReplicaSet patch, a status replace. */
async function writesOf(clients: KubeClients, namespace: string): Promise<Record<'patch' | 'status', Write>> {
  await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
  await clients.apps.createNamespacedReplicaSet({
    namespace,
    body: {
      metadata: { name: 'web-1', namespace, labels: { app: 'web' } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'app:1' }] },
        },
      },
    },
  });
  const rollout = testRollout({ name: 'web' });
  let live = (await clients.custom.createNamespacedCustomObject({
    ...ROLLOUTS,
    namespace,
    body: { ...rollout, metadata: { ...(rollout.metadata as object), namespace } },
  })) as { metadata: Record<string, unknown> };
  return {
    patch: async (i) => {
      await clients.apps.patchNamespacedReplicaSet(
        {
          namespace,
          name: 'web-1',
          fieldManager: FIELD_MANAGER,
          body: { metadata: { annotations: { n: String(i) } } },
        },
        MERGE_PATCH,
      );
    },
    // As the executor's status write: the Rollout as read, its resourceVersion, the new status.
    status: async (i) => {
      const { managedFields: _managed, ...metadata } = live.metadata;
      live = (await clients.custom.replaceNamespacedCustomObjectStatus({
        ...ROLLOUTS,
        namespace,
        name: 'web',
        fieldManager: FIELD_MANAGER,
        body: {
          ...live,
          metadata,
          status: { phase: 'Progressing', currentStepIndex: i % 4, message: `pass ${i}` },
        },
      })) as { metadata: Record<string, unknown> };
    },
  };
}

/** The floor's writes: the same requests, bodies and answers, by node:http alone. */
function floorWrites(server: string, namespace: string): Record<'patch' | 'status', Write> {
  const agent = new Agent({ keepAlive: true });
  const send = (method: string, path: string, contentType: string, body: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = request(`${server}${path}`, {
        method,
        agent,
        headers: { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      });
      req.end(payload);
    });
  const rolloutPath = `/apis/rollgate.dev/v1alpha1/namespaces/${namespace}/rollouts/web`;
  let live: { metadata: Record<string, unknown> } | undefined;
  return {
    patch: async (i) => {
      await send(
        'PATCH',
        `/apis/apps/v1/namespaces/${namespace}/replicasets/web-1?fieldManager=rollgate`,
        'application/merge-patch+json',
        { metadata: { annotations: { n: String(i) } } },
      );
    },
    status: async (i) => {
      live ??= (await send('PATCH', rolloutPath, 'application/merge-patch+json', {})) as typeof live;
      const { managedFields: _managed, ...metadata } = live!.metadata;
      live = (await send('PUT', `${rolloutPath}/status?fieldManager=rollgate`, 'application/json', {
        ...live,
        metadata,
        status: { phase: 'Progressing', currentStepIndex: i % 4, message: `pass ${i}` },
      })) as typeof live;
    },
  };
}

const cpuMicros = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

export async function run(): Promise<BenchResult[]> {
  const sandbox = await startSandboxInChild();
  const load = [loadavg()[0]!.toFixed(1)];
  try {
    await installCrds(createKubeClients(sandbox.kubeConfig, { plainWrites: false }), rollgateCrds());
    // Each path on a KubeConfig of its own (its own pool), with a request observer as the process has one.
    const clientsOf = (plainWrites: boolean): KubeClients => {
      const clients = createKubeClients(sandboxKubeConfig(sandbox.url), { plainWrites });
      observeKubeRequests(clients.kubeConfig, () => undefined);
      return clients;
    };
    // The floor's namespace gets its objects through client-node (setup, not measured).
    await writesOf(clientsOf(false), 'bench-floor');
    const paths: Record<Path, Record<'patch' | 'status', Write>> = {
      'client-node': await writesOf(clientsOf(false), 'bench-client-node'),
      plain: await writesOf(clientsOf(true), 'bench-plain'),
      floor: floorWrites(sandbox.url, 'bench-floor'),
    };
    const perRound = Math.ceil(CALLS / ROUNDS);
    const cpu: Record<Path, Record<'patch' | 'status', number[]>> = {
      'client-node': { patch: [], status: [] },
      plain: { patch: [], status: [] },
      floor: { patch: [], status: [] },
    };
    // Warm up (JIT, connections), then rounds in which every path takes its turn: a busy machine slows all alike.
    for (const path of Object.keys(paths) as Path[])
      for (let i = 0; i < 100; i += 1) {
        await paths[path].patch(i);
        await paths[path].status(i);
      }
    for (let round = 0; round < ROUNDS; round += 1)
      for (const path of (round % 2 === 0
        ? ['client-node', 'plain', 'floor']
        : ['floor', 'plain', 'client-node']) as Path[])
        for (const kind of ['patch', 'status'] as const) {
          const started = cpuMicros();
          for (let i = 0; i < perRound; i += 1) await paths[path][kind](round * perRound + i);
          cpu[path][kind].push((cpuMicros() - started) / perRound);
        }
    load.push(loadavg()[0]!.toFixed(1));
    const row = (kind: 'patch' | 'status', name: string): BenchResult => {
      const plain = median(cpu.plain[kind]);
      const clientNode = median(cpu['client-node'][kind]);
      const floor = median(cpu.floor[kind]);
      return {
        name: `${name}: client CPU per call, plain path`,
        value: plain,
        unit: 'µs',
        notes: `client-node ${Math.round(clientNode)} µs (${(clientNode / plain).toFixed(2)}× plain); floor (node:http + JSON) ${Math.round(floor)} µs, plain ${(plain / floor).toFixed(2)}× floor; median of ${ROUNDS} rounds × ${perRound} calls; load ${load.join(' → ')}`,
      };
    };
    return [row('patch', 'ReplicaSet merge patch'), row('status', 'Rollout status replace')];
  } finally {
    await sandbox.stop();
  }
}
