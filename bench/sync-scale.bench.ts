// Bench (issue 19): one commit adds 5,000 ConfigMaps beside a changed Rollout (whose mounted ConfigMap changes
// too). How long until the Rollout's canary ReplicaSet exists, until all 5,000 are applied, what the sandbox
// and Rollgate spend, and Rollgate's RSS before, at the peak and once the sync is done. Floor from the same
// run: the sandbox's own cost of creating the same 5,000 ConfigMaps from the bench, 8 in flight, and a
// `kubectl apply --server-side` of them when kubectl is installed. ROLLGATE_BENCH_LOG=1 prints Rollgate's log
// (JSON lines, info) among the results.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { createLogger, silentLogger } from '../src/log/logger.ts';
import { SOURCE_LABEL } from '../src/sync/sync-labels.ts';
import { configMapYaml } from '../test/support/git-fixtures.ts';
import { startBenchWorld } from './bench-world.ts';
import { pushWebhook } from './push-webhook.ts';
import { cpuSecondsOf, ownCpuSeconds } from './process-cpu.ts';
import type { BenchResult } from './run.ts';
import type { SandboxProcess } from './sandbox-process.ts';

const N = Number(process.env.ROLLGATE_BENCH_SYNC_N ?? 5000);
/** How long memory is sampled, once a second, after the sync without forcing a GC. */
const OBSERVE_S = Number(process.env.ROLLGATE_BENCH_SYNC_OBSERVE_S ?? 60);
const LIMIT_MS = 300_000;
const READY_DELAY_MS = 100;
const FLOOR_CONCURRENCY = 8;
const WEBHOOK_SECRET = 'sync-scale-bench';
const execFileAsync = promisify(execFile);

/** A full garbage collection (the flag is set at run time, so the bench needs no node option). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** RSS in MiB after two full collections and a short quiet time (what the process holds, not garbage). */
const MiB = (bytes: number): number => bytes / 2 ** 20;

/** One sample of what the process holds: RSS, V8 heap used / reserved, off-heap (external, ArrayBuffers). */
function memorySample(): string {
  const m = process.memoryUsage();
  return `rss ${MiB(m.rss).toFixed(0)} heapUsed ${MiB(m.heapUsed).toFixed(0)} heapTotal ${MiB(m.heapTotal).toFixed(0)} external ${MiB(m.external).toFixed(0)} arrayBuffers ${MiB(m.arrayBuffers).toFixed(0)} MiB`;
}

async function settledRssMiB(): Promise<number> {
  for (let i = 0; i < 2; i++) {
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return process.memoryUsage().rss / 2 ** 20;
}

function rolloutYaml(image: string, configVersion: string): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      volumes:
        - name: conf
          configMap: { name: web-config }
      containers:
        - name: app
          image: ${image}
          env:
            - name: CONFIG_VERSION
              value: "${configVersion}"
  strategy:
    canary:
      scaleDownDelaySeconds: 0
      steps:
        - setWeight: 50
        - pause: {}
`;
}

const unrelated = (i: number): string => `unrelated-${String(i).padStart(5, '0')}`;

/** Resolves once `done()` holds, woken by a watch; throws past LIMIT_MS. */
async function until(done: () => boolean, wakeUp: { wake?: () => void }): Promise<void> {
  const deadline = performance.now() + LIMIT_MS;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`not done within ${LIMIT_MS} ms`);
    await new Promise<void>((resolve) => {
      wakeUp.wake = resolve;
      setTimeout(resolve, 250);
    });
  }
}

/** The floor: the bench creates N ConfigMaps itself, FLOOR_CONCURRENCY in flight. */
async function floorCreates(sandbox: SandboxProcess, namespace: string): Promise<void> {
  const core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  let next = 0;
  const writer = async (): Promise<void> => {
    for (let i = next++; i < N; i = next++)
      await core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name: unrelated(i) }, data: { i: String(i) } },
      });
  };
  await Promise.all(Array.from({ length: FLOOR_CONCURRENCY }, writer));
}

/** `kubectl apply --server-side` of the same N ConfigMaps (one file), or undefined without kubectl. */
async function kubectlApply(
  sandbox: SandboxProcess,
  dir: string,
  kubeconfig: string,
  namespace: string,
): Promise<number | undefined> {
  const manifest = join(dir, 'floor.yaml');
  writeFileSync(
    manifest,
    Array.from({ length: N }, (_, i) => configMapYaml(unrelated(i), { i: String(i) }, namespace)).join(
      '---\n',
    ),
  );
  const core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  const started = performance.now();
  try {
    await execFileAsync(
      'kubectl',
      ['--kubeconfig', kubeconfig, 'apply', '--server-side', '--field-manager=bench', '-f', manifest],
      { maxBuffer: 64 * 2 ** 20 },
    );
  } catch (err) {
    console.log(`kubectl apply floor skipped: ${(err as Error).message.split('\n')[0]}`);
    return undefined;
  }
  return performance.now() - started;
}

export async function run(): Promise<BenchResult[]> {
  const world = await startBenchWorld({
    tempPrefix: 'rollgate-sync-scale-bench-',
    readyDelayMs: READY_DELAY_MS,
  });
  const { sandbox } = world;
  const stops: Array<() => void> = [];
  try {
    const { repoUrl, work } = await world.serveAppsRepository();
    const loads = [loadavg()[0] ?? 0];
    work.write({
      'web.yaml': rolloutYaml('web:0', '0'),
      'web-config.yaml': configMapYaml('web-config', { version: '0' }),
    });
    work.commit('web');
    await work.push(repoUrl);
    const runtime = world.rollgateRuntime(
      'sync-scale-bench',
      {
        git: { cacheDir: join(world.dir, 'cache') },
        sources: [{ name: 'apps', url: repoUrl, branch: 'main', path: '.', interval: '1h' }],
        webhooks: { github: { secret: WEBHOOK_SECRET } },
      },
      process.env.ROLLGATE_BENCH_LOG ? createLogger({ level: 'info', format: 'json' }) : silentLogger,
    );

    // What the bench watches: ReplicaSet images, and ConfigMaps the source applied.
    const images = new Set<string>();
    const applied = new Set<string>();
    const wakeUp: { wake?: () => void } = {};
    const watch = new Watch(sandbox.kubeConfig);
    let watching = true;
    stops.push(() => {
      watching = false;
    });
    // client-node ends a watch that saw no event for 30 s (an idle ReplicaSet watch while the 5,000 files are
    // committed and pushed): each watch starts again when it ends, its restart listing what exists as ADDED.
    const keepWatching = async <T>(
      path: string,
      query: Record<string, string>,
      onEvent: (type: string, object: T) => void,
    ): Promise<void> => {
      const request = await watch.watch(
        path,
        query,
        (type: string, object: T) => onEvent(type, object),
        () => {
          if (watching) void keepWatching(path, query, onEvent).catch(() => undefined);
        },
      );
      stops.push(() => request.abort());
    };
    await keepWatching(
      '/apis/apps/v1/namespaces/default/replicasets',
      {},
      (
        _type: string,
        rs: { spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } } },
      ) => {
        for (const c of rs.spec?.template?.spec?.containers ?? []) if (c.image) images.add(c.image);
        wakeUp.wake?.();
      },
    );
    await keepWatching(
      '/api/v1/namespaces/default/configmaps',
      { labelSelector: `${SOURCE_LABEL}=apps` },
      (type: string, cm: { metadata?: { name?: string } }) => {
        if (type !== 'DELETED') applied.add(cm.metadata?.name ?? '');
        wakeUp.wake?.();
      },
    );

    const running = await world.startRollgate(runtime, 'all');
    await until(() => images.has('web:0'), wakeUp);
    const rssBefore = await settledRssMiB();

    const files: Record<string, string> = {
      'web.yaml': rolloutYaml('web:1', '1'),
      'web-config.yaml': configMapYaml('web-config', { version: '1' }),
    };
    for (let i = 0; i < N; i++)
      files[`many/${unrelated(i)}.yaml`] = configMapYaml(unrelated(i), { i: String(i) });
    work.write(files);
    const head = work.commit(`web:1 and ${N} ConfigMaps`);
    await work.push(repoUrl);
    loads.push(loadavg()[0] ?? 0);

    console.log(`\n  before the push (after full GCs): ${memorySample()}`);
    let peakRss = process.memoryUsage().rss;
    let peakHeapUsed = 0;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeapUsed = Math.max(peakHeapUsed, m.heapUsed);
    }, 100);
    stops.push(() => clearInterval(sampler));
    const cpu0 = {
      sandbox: cpuSecondsOf(sandbox.pid),
      rollgate: ownCpuSeconds(),
      requests: await sandbox.requests(),
    };
    const started = performance.now();
    await pushWebhook(running, WEBHOOK_SECRET, repoUrl, head);
    await until(() => images.has('web:1'), wakeUp).catch(async (err: unknown) => {
      // Whether the watch missed it or Rollgate did not make it: what the API server holds.
      const apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);
      const listed = await apps.listNamespacedReplicaSet({ namespace: 'default' });
      const rollout = await sandbox.kubeConfig
        .makeApiClient(CustomObjectsApi)
        .getNamespacedCustomObject({
          group: 'rollgate.dev',
          version: 'v1alpha1',
          namespace: 'default',
          plural: 'rollouts',
          name: 'web',
        })
        .catch((e: unknown) => String(e));
      console.log(
        `canary not seen: ReplicaSets ${JSON.stringify(listed.items.map((rs) => [rs.metadata?.name, rs.spec?.template?.spec?.containers?.[0]?.image]))}; watch saw ${JSON.stringify([...images])}; rollout ${JSON.stringify(rollout).slice(0, 3000)}`,
      );
      throw err;
    });
    const canaryMs = performance.now() - started;
    await until(() => applied.size >= N + 1, wakeUp);
    const allMs = performance.now() - started;
    const cpu1 = {
      sandbox: cpuSecondsOf(sandbox.pid),
      rollgate: ownCpuSeconds(),
      requests: await sandbox.requests(),
    };
    clearInterval(sampler);
    // The sync job ends after its last write (state ConfigMap). First what a process left alone shows, once
    // a second for OBSERVE_S (V8 collects when it decides to), then what it holds after full collections.
    console.log(`\n  at the sync's end: ${memorySample()}`);
    let rssUnforced = MiB(process.memoryUsage().rss);
    let backWithin50 = Number.NaN;
    for (let s = 1; s <= Math.max(OBSERVE_S, 10); s++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const rss = MiB(process.memoryUsage().rss);
      if (s === 10) rssUnforced = rss;
      if (Number.isNaN(backWithin50) && rss - rssBefore <= 50) backWithin50 = s;
      if (s <= OBSERVE_S) console.log(`  +${s} s: ${memorySample()}`);
    }
    const rssObserved = MiB(process.memoryUsage().rss);
    const rssAfter = await settledRssMiB();
    console.log(`  after full GCs: ${memorySample()}`);
    loads.push(loadavg()[0] ?? 0);
    for (const stop of stops.splice(0)) stop();
    await world.stopRollgate();

    const floorCpu0 = cpuSecondsOf(sandbox.pid);
    const floorStarted = performance.now();
    await floorCreates(sandbox, 'floor');
    const floorMs = performance.now() - floorStarted;
    const floorCpu = cpuSecondsOf(sandbox.pid) - floorCpu0;
    const kubectlMs = await kubectlApply(sandbox, world.dir, world.kubeconfig, 'floor-kubectl');
    loads.push(loadavg()[0] ?? 0);

    const load = `load average ${loads.map((l) => l.toFixed(1)).join(' → ')} on 2 cores`;
    const sandboxCpu = cpu1.sandbox - cpu0.sandbox;
    return [
      {
        name: `push (${N} ConfigMaps + changed Rollout) → its canary ReplicaSet`,
        value: Math.round(canaryMs),
        unit: 'ms',
        goal: '≤ 5 s',
        notes: `webhook to ReplicaSet of web:1 seen by a watch; the Rollout waits for the ConfigMap it mounts; ${load}`,
      },
      {
        name: `push → all ${N} ConfigMaps applied`,
        value: Math.round(allMs),
        unit: 'ms',
        goal: '≤ 20 s',
        notes: `git.applyConcurrency 8; CPU: sandbox ${sandboxCpu.toFixed(1)} s, Rollgate ${(cpu1.rollgate - cpu0.rollgate).toFixed(1)} s (bench's watches included); ${((cpu1.requests - cpu0.requests) / N).toFixed(1)} API requests per object`,
      },
      {
        name: `floor: ${N} ConfigMap creates from the bench, ${FLOOR_CONCURRENCY} in flight`,
        value: Math.round(floorMs),
        unit: 'ms',
        notes: `sandbox CPU ${floorCpu.toFixed(1)} s; sync ÷ floor: wall ${(allMs / floorMs).toFixed(1)}×, sandbox CPU ${(sandboxCpu / Math.max(floorCpu, 0.01)).toFixed(1)}×`,
      },
      ...(kubectlMs !== undefined
        ? [
            {
              name: `floor: kubectl apply --server-side of the same ${N} ConfigMaps`,
              value: Math.round(kubectlMs),
              unit: 'ms',
              notes: `sync ÷ kubectl: ${(allMs / kubectlMs).toFixed(1)}×`,
            },
          ]
        : []),
      {
        name: 'Rollgate RSS once the sync is done − before the push',
        value: Math.round(rssAfter - rssBefore),
        unit: 'MiB',
        goal: '≤ 50 MiB',
        notes: `before ${rssBefore.toFixed(0)} MiB, peak ${MiB(peakRss).toFixed(0)} MiB (peak heapUsed ${MiB(peakHeapUsed).toFixed(0)} MiB), after ${rssAfter.toFixed(0)} MiB (after full GCs); without forcing one: ${rssUnforced.toFixed(0)} MiB 10 s after the sync, ${rssObserved.toFixed(0)} MiB ${Math.max(OBSERVE_S, 10)} s after, ${Number.isNaN(backWithin50) ? 'not' : `first`} within 50 MiB of before${Number.isNaN(backWithin50) ? '' : ` after ${backWithin50} s`}; Rollgate runs in the bench process`,
      },
    ];
  } finally {
    for (const stop of stops) stop();
    await world.stop();
  }
}
