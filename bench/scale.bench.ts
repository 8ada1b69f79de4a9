// Bench (issue 19): N Rollouts applied from one commit until Healthy, then one commit changing all N images
// until every canary is at its first pause; CPU split between the sandbox, Rollgate and Redis, API requests
// per rollout, and a floor from the same run: the sandbox's own cost of the minimal writes for the same N.
// First, what 100 ReplicaSet creates cost the sandbox beside 10,000 pods against an empty sandbox.
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  AppsV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1ReplicaSet,
  Watch,
} from '@kubernetes/client-node';
import { configSchema } from '../src/config/index.ts';
import { startPrivateRedisServer } from '../src/demo/private-redis-server.ts';
import { createKubeClients } from '../src/kube/client.ts';
import { silentLogger } from '../src/log/logger.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { openRuntime } from '../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../src/process/start-process.ts';
import { rolloutYaml } from '../test/integration/pipeline/pipeline-harness.ts';
import { createBareRepository, makeTempDir, WorkingCopy } from '../test/support/git-fixtures.ts';
import { serveGitRepositoriesInChild } from './git-server-process.ts';
import type { BenchResult } from './run.ts';
import { startSandboxInChild, type SandboxProcess } from './sandbox-process.ts';

const N = Number(process.env.ROLLGATE_BENCH_SCALE_N ?? 200);
/** A phase that takes longer than this is a failed run, not a sample. */
const LIMIT_MS = Number(process.env.ROLLGATE_BENCH_SCALE_LIMIT_MS ?? 600_000);
/** Pods become Ready this long after creation (the pipeline tests' value; the default is 1 s). */
const READY_DELAY_MS = 100;
/** Writes the floor keeps in flight, about what Rollgate's workers do. */
const FLOOR_CONCURRENCY = 8;
const WEBHOOK_SECRET = 'scale-bench';
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds of another process, from /proc/<pid>/stat (utime and stime, in clock ticks). */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name (which may hold spaces) start after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

interface RolloutState {
  phase?: string;
  currentPodHash?: string;
  stableRS?: string;
}

/** Every Rollout's status as the last watch event carried it, and a wait for a condition over all of them. */
async function watchRollouts(sandbox: SandboxProcess): Promise<{
  states: Map<string, RolloutState>;
  waitFor(done: (states: Map<string, RolloutState>) => boolean): Promise<void>;
  stop(): void;
}> {
  const states = new Map<string, RolloutState>();
  let wake: (() => void) | undefined;
  const controller = await new Watch(sandbox.kubeConfig).watch(
    '/apis/rollgate.dev/v1alpha1/namespaces/default/rollouts',
    {},
    (type: string, obj: { metadata?: { name?: string }; status?: RolloutState }) => {
      const name = obj.metadata?.name ?? '';
      if (type === 'DELETED') states.delete(name);
      else states.set(name, obj.status ?? {});
      wake?.();
    },
    () => undefined,
  );
  return {
    states,
    async waitFor(done) {
      const deadline = performance.now() + LIMIT_MS;
      while (!done(states)) {
        if (performance.now() > deadline) throw new Error(`not done within ${LIMIT_MS} ms`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 1000);
        });
      }
    },
    stop: () => controller.abort(),
  };
}

interface Sample {
  wallMs: number;
  /** Requests by kind during the measure (`GET replicasets ?labelSelector`, …), most first. */
  kinds: Array<[string, number]>;
  sandboxCpu: number;
  rollgateCpu: number;
  redisCpu: number;
  requests: number;
}

/** Measures `work`: wall time, CPU seconds of each process and requests the sandbox received. */
async function measure(
  sandbox: SandboxProcess,
  redisPid: number,
  work: () => Promise<void>,
): Promise<Sample> {
  const before = {
    sandbox: cpuSecondsOf(sandbox.pid),
    rollgate: ownCpuSeconds(),
    redis: cpuSecondsOf(redisPid),
    requests: await sandbox.requests(),
    kinds: await sandbox.requestKinds(),
  };
  const started = performance.now();
  await work();
  const wallMs = performance.now() - started;
  const kinds = await sandbox.requestKinds();
  return {
    wallMs,
    kinds: Object.entries(kinds)
      .map(([kind, count]): [string, number] => [kind, count - (before.kinds[kind] ?? 0)])
      .filter(([, count]) => count > 0)
      .sort((a, b) => b[1] - a[1]),
    sandboxCpu: cpuSecondsOf(sandbox.pid) - before.sandbox,
    rollgateCpu: ownCpuSeconds() - before.rollgate,
    redisCpu: cpuSecondsOf(redisPid) - before.redis,
    requests: (await sandbox.requests()) - before.requests,
  };
}

function files(image: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < N; i++) out[`web-${i}.yaml`] = rolloutYaml({ name: `web-${i}`, image });
  return out;
}

async function pushWebhook(process: RunningProcess, repoUrl: string, head: string): Promise<void> {
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    after: head,
    repository: { clone_url: repoUrl, html_url: repoUrl, full_name: 'bench/apps' },
  });
  const signature = `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`;
  const res = await fetch(`${process.http.url}/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': signature,
    },
    body,
  });
  if (!res.ok) throw new Error(`webhook answered ${res.status}`);
}

/**
 * The floor: with Rollgate stopped, the bench itself makes the writes a canary's first step needs at the
 * least (a ReplicaSet of 1 replica, one Rollout status write) for each of the N, FLOOR_CONCURRENCY in
 * flight, and waits for every one of those ReplicaSets to have its pod Ready. What the sandbox spends on
 * that, in the same world (N Rollouts, their ReplicaSets and pods), is what no reconciler can go below.
 */
async function floorWrites(sandbox: SandboxProcess): Promise<void> {
  const apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);
  const custom = sandbox.kubeConfig.makeApiClient(CustomObjectsApi);
  const ready = new Set<string>();
  let wake: (() => void) | undefined;
  const controller = await new Watch(sandbox.kubeConfig).watch(
    '/apis/apps/v1/namespaces/default/replicasets',
    { labelSelector: 'floor=1' },
    (_type: string, rs: { metadata?: { name?: string }; status?: { readyReplicas?: number } }) => {
      if (rs.status?.readyReplicas === 1) ready.add(rs.metadata?.name ?? '');
      wake?.();
    },
    () => undefined,
  );
  let next = 0;
  const writer = async (): Promise<void> => {
    for (let i = next++; i < N; i = next++) {
      await apps.createNamespacedReplicaSet({
        namespace: 'default',
        body: {
          metadata: { name: `floor-${i}`, labels: { floor: '1' } },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: `floor-${i}` } },
            template: {
              metadata: { labels: { app: `floor-${i}` } },
              spec: { containers: [{ name: 'app', image: 'web:floor' }] },
            },
          },
        },
      });
      await custom.patchNamespacedCustomObjectStatus(
        {
          group: 'rollgate.dev',
          version: 'v1alpha1',
          namespace: 'default',
          plural: 'rollouts',
          name: `web-${i}`,
          body: { status: { message: 'floor' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
  };
  await Promise.all(Array.from({ length: FLOOR_CONCURRENCY }, writer));
  const deadline = performance.now() + LIMIT_MS;
  while (ready.size < N) {
    if (performance.now() > deadline) throw new Error(`floor not ready within ${LIMIT_MS} ms`);
    await new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, 1000);
    });
  }
  controller.abort();
}

/** ReplicaSets (2 pods each) already stored when the write cost is measured: 10,000 pods by default. */
const WORLD = Number(process.env.ROLLGATE_BENCH_SCALE_WORLD ?? 5000);
const PROBES = 100;

/**
 * CPU the sandbox (in-process, system clock) spends on PROBES ReplicaSet creates of 1 replica until
 * every pod is Ready, beside `world` ReplicaSets of 2 pods: a write should cost what it affects, so the
 * figure should not grow with `world`.
 */
async function writeCost(world: number): Promise<number> {
  const sandbox = await startSandbox({ readyDelayMs: READY_DELAY_MS });
  try {
    const apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);
    const replicaSet = (name: string, replicas: number): V1ReplicaSet => ({
      metadata: { name, labels: { app: name, probe: name.startsWith('probe-') ? '1' : '0' } },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image: 'web:1' }] },
        },
      },
    });
    let next = 0;
    const fill = async (): Promise<void> => {
      for (let i = next++; i < world; i = next++)
        await apps.createNamespacedReplicaSet({ namespace: 'default', body: replicaSet(`world-${i}`, 2) });
    };
    await Promise.all(Array.from({ length: FLOOR_CONCURRENCY }, fill));
    await sandbox.settle();
    await new Promise((resolve) => setTimeout(resolve, 2 * READY_DELAY_MS));
    const before = ownCpuSeconds();
    for (let i = 0; i < PROBES; i++)
      await apps.createNamespacedReplicaSet({ namespace: 'default', body: replicaSet(`probe-${i}`, 1) });
    const deadline = performance.now() + LIMIT_MS;
    for (;;) {
      const probes = await apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'probe=1' });
      if (probes.items.filter((rs) => rs.status?.readyReplicas === 1).length === PROBES) break;
      if (performance.now() > deadline) throw new Error(`probes not ready within ${LIMIT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return ownCpuSeconds() - before;
  } finally {
    await sandbox.stop();
  }
}

export async function run(): Promise<BenchResult[]> {
  // The first sandbox of the process pays the JIT's warm-up: it is run once and not counted.
  await writeCost(0);
  const empty = await writeCost(0);
  const full = await writeCost(WORLD);
  const writeRows: BenchResult[] = [
    {
      name: `sandbox: ${PROBES} ReplicaSet creates → pods Ready, beside ${WORLD} ReplicaSets and ${2 * WORLD} pods`,
      value: Number((full * 1000).toFixed(0)),
      unit: 'ms CPU',
      goal: 'O(objects the write affects)',
      notes: `in-process sandbox, the bench's client included; floor (same creates, empty sandbox, same run): ${(empty * 1000).toFixed(0)} ms CPU, ratio ${(full / Math.max(empty, 0.001)).toFixed(1)}×`,
    },
  ];
  return [...writeRows, ...(await rolloutsAtScale())];
}

async function rolloutsAtScale(): Promise<BenchResult[]> {
  const tmp = makeTempDir('rollgate-scale-bench-');
  // Its own Redis always (never REDIS_URL): the bench fills it, and reads the server's CPU time.
  const redis = await startPrivateRedisServer();
  const sandbox = await startSandboxInChild({
    readyDelayMs: READY_DELAY_MS,
    ...(process.env.ROLLGATE_BENCH_SCALE_PROFILE
      ? { cpuProfileDir: process.env.ROLLGATE_BENCH_SCALE_PROFILE }
      : {}),
  });
  const root = join(tmp.path, 'repos');
  createBareRepository(root, 'apps');
  const git = await serveGitRepositoriesInChild(root, { receivePack: true });
  const repoUrl = `${git.url}/apps.git`;
  const work = new WorkingCopy(join(tmp.path, 'work'));
  const loads = [loadavg()[0] ?? 0];
  let rollgate: RunningProcess | undefined;
  try {
    work.write(files('web:0'));
    work.commit('N rollouts');
    await work.push(repoUrl);
    const config = configSchema.parse({
      log: { level: 'silent' },
      redis: { url: redis.url, prefix: 'scale-bench' },
      server: { host: '127.0.0.1', port: 0 },
      git: { cacheDir: join(tmp.path, 'cache') },
      sources: [{ name: 'apps', url: repoUrl, branch: 'main', path: '.', interval: '1h' }],
      webhooks: { github: { secret: WEBHOOK_SECRET } },
    });
    const runtime = openRuntime(config, {
      logger: silentLogger,
      kube: {
        clients: createKubeClients(sandbox.kubeConfig),
        namespace: 'default',
        source: 'flag',
        origin: sandbox.url,
      },
    });
    let rollouts: Awaited<ReturnType<typeof watchRollouts>> | undefined;
    const healthy = await measure(sandbox, redis.pid, async () => {
      rollgate = await startProcess(runtime, { role: 'all' });
      rollouts = await watchRollouts(sandbox);
      await rollouts.waitFor(
        (states) =>
          states.size === N &&
          [...states.values()].every((s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS),
      );
    });
    if (!rollouts || !rollgate) throw new Error('Rollgate did not start');
    const watched = rollouts;
    const running = rollgate;
    const stableHash = new Map([...watched.states].map(([name, s]) => [name, s.currentPodHash]));
    loads.push(loadavg()[0] ?? 0);

    work.write(files('web:1'));
    const head = work.commit('new image on all');
    await work.push(repoUrl);
    const paused = await measure(sandbox, redis.pid, async () => {
      await pushWebhook(running, repoUrl, head);
      await watched.waitFor((states) =>
        [...states].every(
          ([name, s]) =>
            s.phase === 'Paused' &&
            s.currentPodHash !== undefined &&
            s.currentPodHash !== stableHash.get(name),
        ),
      );
    });
    const rssMiB = process.memoryUsage().rss / 2 ** 20;
    loads.push(loadavg()[0] ?? 0);
    watched.stop();
    await running.stop({ force: true });
    rollgate = undefined;

    const floor = await measure(sandbox, redis.pid, () => floorWrites(sandbox));
    loads.push(loadavg()[0] ?? 0);

    // Where the requests go, per rollout: printed for the report (the table has no room for it).
    for (const [phase, sample] of [
      ['to Healthy', healthy],
      ['to first pause', paused],
    ] as const)
      console.log(
        `requests per rollout, ${phase}: ${sample.kinds.map(([kind, count]) => `${kind} ${(count / N).toFixed(2)}`).join('; ')}`,
      );
    const load = `load average ${loads.map((l) => l.toFixed(1)).join(' → ')} on 2 cores`;
    const cpu = (s: Sample): string =>
      `CPU: sandbox ${s.sandboxCpu.toFixed(1)} s, Rollgate ${s.rollgateCpu.toFixed(1)} s, Redis ${s.redisCpu.toFixed(1)} s`;
    return [
      {
        name: `${N} Rollouts applied from one commit → all Healthy`,
        value: Math.round(healthy.wallMs),
        unit: 'ms',
        notes: `${cpu(healthy)}; ${(healthy.requests / N).toFixed(1)} API requests per rollout; ${load}`,
      },
      {
        name: `new image on all ${N} (one commit, webhook) → every canary at its first pause`,
        value: Math.round(paused.wallMs),
        unit: 'ms',
        goal: N === 1000 ? '≤ 60 s' : '',
        notes: `${cpu(paused)}; ${(paused.requests / N).toFixed(1)} API requests per rollout; Rollgate RSS ${rssMiB.toFixed(0)} MiB`,
      },
      {
        name: `floor: ${N} × (ReplicaSet of 1 created, Rollout status written) → all pods Ready`,
        value: Math.round(floor.wallMs),
        unit: 'ms',
        notes: `sandbox CPU ${floor.sandboxCpu.toFixed(1)} s; ${(floor.requests / N).toFixed(1)} requests per rollout; ${FLOOR_CONCURRENCY} in flight, from the bench`,
      },
      {
        name: 'first pause: sandbox CPU ÷ floor sandbox CPU',
        value: Number((paused.sandboxCpu / Math.max(floor.sandboxCpu, 0.01)).toFixed(1)),
        unit: '×',
        notes: `wall ÷ floor wall: ${(paused.wallMs / floor.wallMs).toFixed(1)}×`,
      },
    ];
  } finally {
    if (rollgate) await rollgate.stop({ force: true }).catch(() => undefined);
    await sandbox.stop();
    await git.stop();
    await redis.stop();
    tmp.remove();
  }
}
