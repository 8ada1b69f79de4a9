// Bench (issue 28): one source holding OVERLAYS kustomize overlays over BASES bases (a canary Rollout, a Service
// and a configMapGenerator each), served by git http-backend, applied to the sandbox by Rollgate in-process.
// Measures the first sync (every overlay rendered), a push to one overlay's `images:` until its canary
// ReplicaSet beside that push's floor in the same run (`kustomize build` of the overlay alone with the same
// binary, then its output as plain YAML in a second repository and source: push → canary ReplicaSet),
// alternating which goes first, and a push to one base until the canary ReplicaSets of every overlay using
// it. Kustomize runs are read from rollgate_renders_total; a push to one overlay must run exactly one.
// Sizes: ROLLGATE_BENCH_KUSTOMIZE_OVERLAYS (200), _BASES (20), _PUSHES (7); ROLLGATE_BENCH_LOG=1 prints
// Rollgate's log lines about diffs and syncs; ROLLGATE_BENCH_CPU_PROFILE=DIR writes a CPU profile of the bench
// process (Rollgate in-process) over the overlay pushes to DIR/kustomize-pushes.cpuprofile.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { CoreV1Api, Watch } from '@kubernetes/client-node';
import { createLogger } from '../src/log/logger.ts';
import {
  buildArguments,
  findKustomize,
  type KustomizeBinary,
} from '../src/render/kustomize/kustomize-binary.ts';
import { renderEnvironment } from '../src/render/kustomize/kustomize-process.ts';
import type { RunningProcess } from '../src/process/start-process.ts';
import { createBareRepository, WorkingCopy } from '../test/support/git-fixtures.ts';
import { startBenchWorld } from './bench-world.ts';
import { pushWebhook } from './push-webhook.ts';
import { cpuSecondsOf, ownCpuSeconds } from './process-cpu.ts';
import type { BenchResult } from './run.ts';
import { median } from './stats.ts';

const OVERLAYS = Number(process.env.ROLLGATE_BENCH_KUSTOMIZE_OVERLAYS ?? 200);
const BASES = Number(process.env.ROLLGATE_BENCH_KUSTOMIZE_BASES ?? 20);
/** Overlay pushes, each measured beside its floor; the two take turns going first. */
const PUSHES = Number(process.env.ROLLGATE_BENCH_KUSTOMIZE_PUSHES ?? 7);
/** A wait longer than this is a failed run, not a sample. */
const LIMIT_MS = Number(process.env.ROLLGATE_BENCH_KUSTOMIZE_LIMIT_MS ?? 600_000);
const READY_DELAY_MS = 100;
const WEBHOOK_SECRET = 'kustomize-bench-secret';
const execFileAsync = promisify(execFile);

const overlayName = (i: number): string => `o-${String(i).padStart(3, '0')}`;
const baseName = (b: number): string => `base-${String(b).padStart(2, '0')}`;
const baseOf = (i: number): number => i % BASES;
const floorNamespace = (i: number): string => `floor-${String(i).padStart(3, '0')}`;

const ROLLOUT = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.0
          envFrom:
            - configMapRef: {name: web-config}
  strategy:
    canary:
      steps:
        - setWeight: 50
        - pause: {}
`;

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - port: 80
`;

const REPLICAS_PATCH = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 1
`;

function baseKustomization(b: number, greeting: string): string {
  return `resources:
  - rollout.yaml
  - service.yaml
configMapGenerator:
  - name: web-config
    literals:
      - GREETING=${greeting}
      - BASE=${baseName(b)}
`;
}

function overlayKustomization(i: number, tag: string): string {
  return `resources:
  - ../../bases/${baseName(baseOf(i))}
namespace: ${overlayName(i)}
images:
  - name: nginx
    newTag: "${tag}"
patches:
  - path: replicas.yaml
`;
}

/** The whole repository: BASES bases, OVERLAYS overlays, each overlay on base `i % BASES`. */
function repositoryFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let b = 0; b < BASES; b++) {
    files[`bases/${baseName(b)}/kustomization.yaml`] = baseKustomization(b, 'hello');
    files[`bases/${baseName(b)}/rollout.yaml`] = ROLLOUT;
    files[`bases/${baseName(b)}/service.yaml`] = SERVICE;
  }
  for (let i = 0; i < OVERLAYS; i++) {
    files[`overlays/${overlayName(i)}/kustomization.yaml`] = overlayKustomization(i, '1.0');
    files[`overlays/${overlayName(i)}/replicas.yaml`] = REPLICAS_PATCH;
  }
  return files;
}

/** The overlays pushed, spread over the repository and never on the base the base push changes. */
function pushedOverlays(): number[] {
  const chosen: number[] = [];
  for (let i = 3; chosen.length < PUSHES; i = (i + 23) % OVERLAYS) {
    if (baseOf(i) !== BASES - 1 && !chosen.includes(i)) chosen.push(i);
    if (chosen.length >= OVERLAYS - Math.ceil(OVERLAYS / BASES)) break;
  }
  return chosen;
}

/** One line of Rollgate's JSON log, with when it reached the bench. */
interface LogLine {
  at: number;
  msg?: string;
  source?: string;
  commit?: string;
  to?: string;
  renders?: number;
  renderCacheHits?: number;
  [field: string]: unknown;
}

/** Resolves once `done()` holds, woken by a watch event or a log line; throws past LIMIT_MS. */
async function until<T>(what: string, done: () => T | undefined, wakeUp: { wake?: () => void }): Promise<T> {
  const deadline = performance.now() + LIMIT_MS;
  for (;;) {
    const value = done();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline) throw new Error(`${what}: not done within ${LIMIT_MS} ms`);
    await new Promise<void>((resolve) => {
      wakeUp.wake = resolve;
      setTimeout(resolve, 250);
    });
  }
}

/** rollgate_renders_total of `source` by result, from the process's /metrics. */
async function rendersOf(process: RunningProcess, source: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${process.http.url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('rollgate_renders_total{')) continue;
    const labels = line.slice(line.indexOf('{') + 1, line.indexOf('}'));
    if (!labels.includes(`source="${source}"`)) continue;
    const result = /result="([^"]+)"/.exec(labels)?.[1] ?? '';
    counts[result] = Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return counts;
}

const delta = (after: Record<string, number>, before: Record<string, number>, key: string): number =>
  (after[key] ?? 0) - (before[key] ?? 0);

/** `kustomize build` of one overlay of the working copy, the same binary and arguments a render uses. */
async function kustomizeBuild(binary: KustomizeBinary, cwd: string, dir: string): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'rollgate-kustomize-bench-home-'));
  try {
    const { stdout } = await execFileAsync(binary.path, buildArguments(binary, dir), {
      cwd,
      env: renderEnvironment(home),
      maxBuffer: 16 * 2 ** 20,
    });
    return stdout;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const ms = (value: number): string => `${Math.round(value)} ms`;

export async function run(): Promise<BenchResult[]> {
  const binary = await findKustomize(undefined);
  if (binary === undefined) throw new Error('no kustomize or kubectl on PATH');
  const world = await startBenchWorld({
    tempPrefix: 'rollgate-kustomize-bench-',
    readyDelayMs: READY_DELAY_MS,
  });
  const { sandbox } = world;
  const stops: Array<() => void> = [];
  try {
    createBareRepository(world.gitRoot, 'floor');
    const { git, repoUrl, work } = await world.serveAppsRepository();
    const floorUrl = `${git.url}/floor.git`;
    const floorWork = new WorkingCopy(join(world.dir, 'floor-work'));
    const loads = [loadavg()[0] ?? 0];
    const pushed = pushedOverlays();

    // Every overlay's namespace, and the floor's (the plain copy of an overlay goes to floor-NNN).
    const core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
    for (const name of [
      ...Array.from({ length: OVERLAYS }, (_, i) => overlayName(i)),
      ...pushed.map(floorNamespace),
    ])
      await core.createNamespace({ body: { metadata: { name } } });

    work.write(repositoryFiles());
    work.commit(`${OVERLAYS} overlays over ${BASES} bases`);
    await work.push(repoUrl);
    // The floor's repository: each pushed overlay's output as plain YAML, in its own namespace.
    const asFloor = (i: number, rendered: string): string =>
      rendered.replaceAll(`namespace: ${overlayName(i)}`, `namespace: ${floorNamespace(i)}`);
    const floorFiles: Record<string, string> = {};
    for (const i of pushed)
      floorFiles[`${overlayName(i)}.yaml`] = asFloor(
        i,
        await kustomizeBuild(binary, work.dir, `overlays/${overlayName(i)}`),
      );
    floorWork.write(floorFiles);
    floorWork.commit('the pushed overlays, rendered');
    await floorWork.push(floorUrl);

    // What the bench watches: ReplicaSets by namespace (name → image), Rollout phases, Rollgate's log.
    const wakeUp: { wake?: () => void } = {};
    const replicaSets = new Map<string, Map<string, string>>();
    const phases = new Map<string, string>();
    const log: LogLine[] = [];
    let partial = '';
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        const text = partial + chunk.toString('utf8');
        const lines = text.split('\n');
        partial = lines.pop() ?? '';
        const at = performance.now();
        for (const line of lines) {
          if (line === '') continue;
          const entry = { ...(JSON.parse(line) as Record<string, unknown>), at } as LogLine;
          log.push(entry);
          if (
            process.env.ROLLGATE_BENCH_LOG &&
            /diff computed|source synced|skipped|problem/.test(entry.msg ?? '')
          )
            console.log(`  log ${Math.round(at)} ${line.slice(0, 600)}`);
        }
        wakeUp.wake?.();
        callback();
      },
    });
    const watch = new Watch(sandbox.kubeConfig);
    let watching = true;
    stops.push(() => {
      watching = false;
    });
    // client-node ends a watch that saw no event for a while: each starts again, listing what exists.
    const keepWatching = async <T>(
      path: string,
      onEvent: (type: string, object: T) => void,
    ): Promise<void> => {
      const request = await watch.watch(path, {}, onEvent, () => {
        if (watching) void keepWatching(path, onEvent).catch(() => undefined);
      });
      stops.push(() => request.abort());
    };
    type Named = { metadata?: { name?: string; namespace?: string } };
    await keepWatching(
      '/apis/apps/v1/replicasets',
      (
        type: string,
        rs: Named & { spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } } },
      ) => {
        const ns = rs.metadata?.namespace ?? '';
        const sets = replicaSets.get(ns) ?? new Map<string, string>();
        replicaSets.set(ns, sets);
        if (type === 'DELETED') sets.delete(rs.metadata?.name ?? '');
        else sets.set(rs.metadata?.name ?? '', rs.spec?.template?.spec?.containers?.[0]?.image ?? '');
        wakeUp.wake?.();
      },
    );
    await keepWatching(
      '/apis/rollgate.dev/v1alpha1/rollouts',
      (type: string, r: Named & { status?: { phase?: string } }) => {
        const ns = r.metadata?.namespace ?? '';
        if (type === 'DELETED') phases.delete(ns);
        else phases.set(ns, r.status?.phase ?? '');
        wakeUp.wake?.();
      },
    );
    const hasImage = (ns: string, image: string): boolean =>
      [...(replicaSets.get(ns)?.values() ?? [])].includes(image);
    const synced = (source: string, commit: string): LogLine | undefined =>
      log.find((l) => l.msg === 'source synced' && l.source === source && l.commit === commit);
    const fetchedOf = (source: string, commit: string): LogLine | undefined =>
      log.find((l) => l.msg === 'fetched' && l.source === source && l.head === commit);
    const diffOf = (source: string, commit: string): LogLine | undefined =>
      log.find((l) => l.msg === 'diff computed' && l.source === source && l.to === commit);

    const runtime = world.rollgateRuntime(
      'kustomize-bench',
      {
        git: { cacheDir: join(world.dir, 'cache') },
        sources: [
          {
            name: 'apps',
            url: repoUrl,
            branch: 'main',
            path: '.',
            interval: '1h',
            scope: { namespaces: ['*'] },
          },
          {
            name: 'floor',
            url: floorUrl,
            branch: 'main',
            path: '.',
            interval: '1h',
            render: 'plain',
            scope: { namespaces: ['*'] },
          },
        ],
        webhooks: { github: { secret: WEBHOOK_SECRET } },
      },
      // Debug: the `fetched` line splits webhook → diff into the poll and fetch, and the diff itself.
      createLogger({ level: 'debug', format: 'json', destination }),
    );

    // The first sync: every overlay rendered, applied, and its Rollout's ReplicaSet made.
    const appsHead = work.head();
    const initialCpu = ownCpuSeconds();
    const initialStarted = performance.now();
    const running = await world.startRollgate(runtime, 'all');
    await until(
      `a ReplicaSet in each of the ${OVERLAYS} namespaces`,
      () =>
        Array.from({ length: OVERLAYS }, (_, i) => overlayName(i)).every(
          (ns) => (replicaSets.get(ns)?.size ?? 0) > 0,
        ),
      wakeUp,
    );
    const initialMs = performance.now() - initialStarted;
    const initialDiff = await until('the first diff', () => diffOf('apps', appsHead), wakeUp);
    await until('the first sync', () => synced('apps', appsHead), wakeUp);
    const initialSyncMs = (synced('apps', appsHead)?.at ?? 0) - initialStarted;
    const initialRollgateCpu = ownCpuSeconds() - initialCpu;
    const initialRenders = await rendersOf(running, 'apps');
    await until(
      'the floor Rollouts to be Healthy',
      () => pushed.every((i) => phases.get(floorNamespace(i)) === 'Healthy'),
      wakeUp,
    );
    await until(
      'every Rollout to be Healthy',
      () =>
        Array.from({ length: OVERLAYS }, (_, i) => overlayName(i)).every(
          (ns) => phases.get(ns) === 'Healthy',
        ),
      wakeUp,
    );
    loads.push(loadavg()[0] ?? 0);

    interface PushSample {
      overlay: string;
      first: 'rollgate' | 'floor';
      rollgateMs: number;
      /** Webhook → `diff computed` logged (fetch, tree walk, render, diff). */
      toDiffMs: number;
      /** Webhook → `fetched` logged (poll, ref check, sync job, fetch). */
      toFetchedMs: number;
      renders: number;
      cacheHits: number;
      buildMs: number;
      floorPlainMs: number;
      floorToDiffMs: number;
      floorToFetchedMs: number;
      rollgateCpu: number;
    }
    const samples: PushSample[] = [];
    const profileDir = process.env.ROLLGATE_BENCH_CPU_PROFILE;
    const profiler = profileDir ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    for (const [k, i] of pushed.entries()) {
      const tag = `1.${k + 1}`;
      const image = `nginx:${tag}`;
      work.write({ [`overlays/${overlayName(i)}/kustomization.yaml`]: overlayKustomization(i, tag) });
      const head = work.commit(`${overlayName(i)}: ${image}`);
      const sample: Partial<PushSample> = {
        overlay: overlayName(i),
        first: k % 2 === 0 ? 'rollgate' : 'floor',
      };

      const measureRollgate = async (): Promise<void> => {
        await work.push(repoUrl);
        const before = await rendersOf(running, 'apps');
        const cpu = ownCpuSeconds();
        const started = performance.now();
        await pushWebhook(running, WEBHOOK_SECRET, repoUrl, head);
        await until(`${overlayName(i)}'s canary ReplicaSet`, () => hasImage(overlayName(i), image), wakeUp);
        sample.rollgateMs = performance.now() - started;
        sample.rollgateCpu = ownCpuSeconds() - cpu;
        sample.toDiffMs = ((await until('the diff', () => diffOf('apps', head), wakeUp)).at ?? 0) - started;
        sample.toFetchedMs = (fetchedOf('apps', head)?.at ?? Number.NaN) - started;
        await until('the sync', () => synced('apps', head), wakeUp);
        await until('the canary to pause', () => phases.get(overlayName(i)) === 'Paused', wakeUp);
        const after = await rendersOf(running, 'apps');
        sample.renders = delta(after, before, 'rendered');
        sample.cacheHits = delta(after, before, 'cache-hit');
      };
      const measureFloor = async (): Promise<void> => {
        const built = performance.now();
        const rendered = await kustomizeBuild(binary, work.dir, `overlays/${overlayName(i)}`);
        sample.buildMs = performance.now() - built;
        floorWork.write({ [`${overlayName(i)}.yaml`]: asFloor(i, rendered) });
        const floorHead = floorWork.commit(`${overlayName(i)}: ${image}, rendered`);
        await floorWork.push(floorUrl);
        const started = performance.now();
        await pushWebhook(running, WEBHOOK_SECRET, floorUrl, floorHead);
        await until(`the floor's canary ReplicaSet`, () => hasImage(floorNamespace(i), image), wakeUp);
        sample.floorPlainMs = performance.now() - started;
        sample.floorToDiffMs =
          ((await until('the floor diff', () => diffOf('floor', floorHead), wakeUp)).at ?? 0) - started;
        sample.floorToFetchedMs = (fetchedOf('floor', floorHead)?.at ?? Number.NaN) - started;
        await until('the floor sync', () => synced('floor', floorHead), wakeUp);
        await until('the floor canary to pause', () => phases.get(floorNamespace(i)) === 'Paused', wakeUp);
      };
      if (sample.first === 'rollgate') {
        await measureRollgate();
        await measureFloor();
      } else {
        await measureFloor();
        await measureRollgate();
      }
      const done = sample as PushSample;
      samples.push(done);
      const floor = done.buildMs + done.floorPlainMs;
      console.log(
        `\n  push ${k + 1} (${done.overlay}, ${done.first} first): Rollgate ${ms(done.rollgateMs)} (fetched at ${ms(done.toFetchedMs)}, diff at ${ms(done.toDiffMs)}, CPU ${done.rollgateCpu.toFixed(2)} s, kustomize runs ${done.renders}, cache hits ${done.cacheHits}); ` +
          `floor ${ms(floor)} = build ${ms(done.buildMs)} + plain ${ms(done.floorPlainMs)} (fetched at ${ms(done.floorToFetchedMs)}, diff at ${ms(done.floorToDiffMs)}); ratio ${(done.rollgateMs / floor).toFixed(2)}×; load ${(loadavg()[0] ?? 0).toFixed(1)}`,
      );
    }
    loads.push(loadavg()[0] ?? 0);
    if (profiler && profileDir) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(join(profileDir, 'kustomize-pushes.cpuprofile'), JSON.stringify(profile));
      profiler.disconnect();
    }

    // A push to one base: every overlay using it renders, and each Rollout gets a new revision (its
    // generated ConfigMap's name changed) — a canary ReplicaSet beside the ReplicaSets it had.
    const base = BASES - 1;
    const users = Array.from({ length: OVERLAYS }, (_, i) => i).filter((i) => baseOf(i) === base);
    const knownSets = new Map(
      users.map((i) => [overlayName(i), new Set(replicaSets.get(overlayName(i))?.keys() ?? [])]),
    );
    work.write({ [`bases/${baseName(base)}/kustomization.yaml`]: baseKustomization(base, 'bonjour') });
    const baseHead = work.commit(`${baseName(base)}: a new greeting`);
    await work.push(repoUrl);
    const baseBefore = await rendersOf(running, 'apps');
    const baseStarted = performance.now();
    await pushWebhook(running, WEBHOOK_SECRET, repoUrl, baseHead);
    await until(
      `a canary ReplicaSet for each of the ${users.length} overlays of ${baseName(base)}`,
      () =>
        users.every((i) =>
          [...(replicaSets.get(overlayName(i))?.keys() ?? [])].some(
            (name) => !knownSets.get(overlayName(i))?.has(name),
          ),
        ),
      wakeUp,
    );
    const baseMs = performance.now() - baseStarted;
    const baseToDiffMs =
      ((await until('the base diff', () => diffOf('apps', baseHead), wakeUp)).at ?? 0) - baseStarted;
    await until('the base sync', () => synced('apps', baseHead), wakeUp);
    const baseAfter = await rendersOf(running, 'apps');
    const baseRenders = delta(baseAfter, baseBefore, 'rendered');
    const baseCacheHits = delta(baseAfter, baseBefore, 'cache-hit');
    loads.push(loadavg()[0] ?? 0);

    const ratios = samples.map((s) => s.rollgateMs / (s.buildMs + s.floorPlainMs));
    const load = `load average ${loads.map((l) => l.toFixed(1)).join(' → ')} on ${cpus().length} cores`;
    const list = (values: number[]): string => values.map((v) => Math.round(v)).join(', ');
    const results: BenchResult[] = [
      {
        name: `first sync: ${OVERLAYS} overlays rendered → a ReplicaSet in each namespace`,
        value: Math.round(initialMs),
        unit: 'ms',
        notes: `from Rollgate's start; diff computed at ${ms(initialDiff.at - initialStarted)}, source synced at ${ms(initialSyncMs)}; kustomize runs ${initialRenders.rendered ?? 0}; Rollgate CPU ${initialRollgateCpu.toFixed(1)} s; sandbox CPU ${cpuSecondsOf(sandbox.pid).toFixed(1)} s so far`,
      },
      {
        name: 'push to one overlay’s images: → its canary ReplicaSet (median)',
        value: Math.round(median(samples.map((s) => s.rollgateMs))),
        unit: 'ms',
        notes: `${samples.length} pushes: ${list(samples.map((s) => s.rollgateMs))} ms; medians: webhook → fetched ${ms(median(samples.map((s) => s.toFetchedMs)))}, → diff computed ${ms(median(samples.map((s) => s.toDiffMs)))} (discovery, input keys, the render, the diff)`,
      },
      {
        name: 'floor: kustomize build of the overlay + its output as plain YAML → canary ReplicaSet (median)',
        value: Math.round(median(samples.map((s) => s.buildMs + s.floorPlainMs))),
        unit: 'ms',
        notes: `build ${list(samples.map((s) => s.buildMs))} ms; plain push → canary ${list(samples.map((s) => s.floorPlainMs))} ms (medians: fetched ${ms(median(samples.map((s) => s.floorToFetchedMs)))}, diff computed ${ms(median(samples.map((s) => s.floorToDiffMs)))})`,
      },
      {
        name: 'ratio to the floor (median of the pushes’ ratios)',
        value: Number(median(ratios).toFixed(2)),
        unit: '×',
        goal: '≤ 1.5×',
        notes: `per push ${ratios.map((r) => r.toFixed(2)).join(', ')}; first in each pair alternates (${samples.map((s) => s.first[0]).join('')}); ${load}`,
      },
      {
        name: 'kustomize runs per overlay push',
        value: Math.max(...samples.map((s) => s.renders)),
        unit: 'runs',
        goal: '1',
        notes: `per push ${samples.map((s) => s.renders).join(', ')}; render cache hits (the old side) ${samples.map((s) => s.cacheHits).join(', ')}`,
      },
      {
        name: `push to one base → canary ReplicaSets of its ${users.length} overlays`,
        value: Math.round(baseMs),
        unit: 'ms',
        notes: `kustomize runs ${baseRenders} (goal ${users.length}), cache hits ${baseCacheHits}; diff computed at ${ms(baseToDiffMs)}`,
      },
    ];
    const wrong = samples.filter((s) => s.renders !== 1);
    if (wrong.length > 0 || baseRenders !== users.length || (initialRenders.rendered ?? 0) !== OVERLAYS)
      throw new Error(
        `kustomize runs: first sync ${initialRenders.rendered ?? 0} (want ${OVERLAYS}), overlay pushes ${samples.map((s) => s.renders).join(', ')} (want 1 each), base push ${baseRenders} (want ${users.length}); results: ${JSON.stringify(results)}`,
      );
    return results;
  } finally {
    for (const stop of stops) stop();
    await world.stop();
  }
}
