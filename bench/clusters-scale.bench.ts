// Bench (issue 35): C sandbox clusters (each in its own process) × R Rollouts, served by one `rollgate
// poller` and K `rollgate reconciler` processes on one Redis, the local cluster and C−1 registered by
// `clusters:` contexts. One repository behind git http-backend, one source per cluster (`sources[].cluster`):
// the Rollouts are synced from a first commit; then one commit changes the image of every Rollout of every
// cluster, a push webhook tells the poller, until every canary is at its first pause. Against the same
// run's one-cluster figure (the same processes serving one more sandbox alone, R Rollouts from its own
// repository): the reconcile requests per rollout each cluster received, the sync's applies apart, and the
// processes' RSS → MiB added per cluster.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Watch } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { stringify } from 'yaml';
import { createKubeClients } from '../src/kube/client.ts';
import { installCrds } from '../src/kube/install-crds.ts';
import { rollgateCrds } from '../src/manifest/crds.ts';
import { LOCK_LOST_REASON } from '../src/queue/stall-restart.ts';
import { sandboxKubeconfigDocument } from '../src/sandbox/sandbox-kubeconfig.ts';
import { startPrivateRedisServer } from '../src/demo/private-redis-server.ts';
import { rolloutYaml } from '../test/integration/pipeline/pipeline-harness.ts';
import { createBareRepository, makeTempDir, WorkingCopy } from '../test/support/git-fixtures.ts';
import { postGithubPush } from '../test/support/github-push.ts';
import { serveGitRepositoriesInChild } from './git-server-process.ts';
import type { BenchResult } from './run.ts';
import { startSandboxInChild, type SandboxProcess } from './sandbox-process.ts';
import {
  allAtFirstPause,
  allHealthy,
  rssMiBOf,
  splitRequests,
  startReconcilerProcess,
  type RolloutState,
} from './scale.bench.ts';

const CLUSTERS = Number(process.env.ROLLGATE_BENCH_CLUSTERS ?? 20);
const ROLLOUTS = Number(process.env.ROLLGATE_BENCH_CLUSTERS_ROLLOUTS ?? 100);
const PROCESS_COUNTS = (process.env.ROLLGATE_BENCH_CLUSTERS_PROCESSES ?? '1,2,4').split(',').map(Number);
/** A wait longer than this is a failed run, not a sample. */
const LIMIT_MS = Number(process.env.ROLLGATE_BENCH_SCALE_LIMIT_MS ?? 1_800_000);
/** Pods become Ready this long after creation (as in the scale bench). */
const READY_DELAY_MS = 100;
// At least 16 characters: the configuration refuses a shorter inline webhook secret.
const WEBHOOK_SECRET = 'clusters-scale-bench-secret';

const clusterName = (i: number): string => `c${i}`;

/** One kubeconfig with a context `c<i>` per sandbox; `c0` is the current one (the local cluster). */
function fleetKubeconfig(sandboxes: readonly SandboxProcess[]): string {
  const docs = sandboxes.map((s) => sandboxKubeconfigDocument(s.url));
  const entry = (key: 'clusters' | 'users' | 'contexts', i: number) =>
    (docs[i]![key] as Array<Record<string, unknown>>)[0]!;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: docs.map((_, i) => ({ ...entry('clusters', i), name: clusterName(i) })),
    users: docs.map((_, i) => ({ ...entry('users', i), name: clusterName(i) })),
    contexts: docs.map((_, i) => ({
      name: clusterName(i),
      context: { cluster: clusterName(i), user: clusterName(i), namespace: 'default' },
    })),
    'current-context': clusterName(0),
    preferences: {},
  });
}

/** Every Rollout file of the repository: `c<i>/web-<j>.yaml` for each cluster i, on `image`. */
function rolloutFiles(clusters: number, image: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < clusters; i++)
    for (let j = 0; j < ROLLOUTS; j++)
      files[`${clusterName(i)}/web-${j}.yaml`] = rolloutYaml({ name: `web-${j}`, image });
  return files;
}

/**
 * Every Rollout's status in one sandbox as the last watch event carried it. client-node ends a watch that
 * saw nothing for 30 s (a cluster done early while the others go on, or not yet synced): it is opened
 * again when it ends, its first events an ADDED for every Rollout, so no change is missed.
 */
async function keepWatchingRollouts(sandbox: SandboxProcess): Promise<{
  states: Map<string, RolloutState>;
  waitFor(done: (states: Map<string, RolloutState>) => boolean): Promise<void>;
  stop(): void;
}> {
  const states = new Map<string, RolloutState>();
  let wake: (() => void) | undefined;
  let watching = true;
  let abort: (() => void) | undefined;
  const open = async (): Promise<void> => {
    const controller = await new Watch(sandbox.kubeConfig).watch(
      '/apis/rollgate.dev/v1alpha1/namespaces/default/rollouts',
      {},
      (type: string, obj: { metadata?: { name?: string }; status?: RolloutState }) => {
        const name = obj.metadata?.name ?? '';
        if (type === 'DELETED') states.delete(name);
        else states.set(name, obj.status ?? {});
        wake?.();
      },
      () => {
        if (watching) void open().catch(() => setTimeout(() => void open().catch(() => undefined), 1000));
      },
    );
    abort = () => controller.abort();
  };
  await open();
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
    stop: () => {
      watching = false;
      abort?.();
    },
  };
}

/** How many of every sandbox's Rollouts `done` holds for, logged every minute while `waiting` runs. */
async function reportingProgress<T>(
  what: string,
  watches: ReadonlyArray<{ states: Map<string, RolloutState> }>,
  done: (name: string, state: RolloutState, cluster: number) => boolean,
  waiting: Promise<T>,
): Promise<T> {
  const total = watches.length * ROLLOUTS;
  const timer = setInterval(() => {
    const n = sum(watches.map((w, i) => [...w.states].filter(([name, st]) => done(name, st, i)).length));
    progress(`${what}: ${n}/${total}`);
  }, 60_000);
  try {
    return await waiting;
  } finally {
    clearInterval(timer);
  }
}

/**
 * The reconcile jobs of a phase (Redis prefix `prefix`, every cluster's queues) that lost their lock:
 * `stalls`, the times a stalled-job check moved one back to wait (its events stream, so a lower bound
 * once a stream of 10,000 events is trimmed); `lockLost`, the jobs BullMQ then failed for stalling more
 * than maxStalledCount times (each enqueued again by the worker that saw it).
 */
async function reconcileStalls(
  redisUrl: string,
  prefix: string,
): Promise<{ stalls: number; lockLost: number }> {
  const redis = new Redis(redisUrl, { lazyConnect: true });
  await redis.connect();
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `{${prefix}*:reconcile*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    let stalls = 0;
    let lockLost = 0;
    for (const key of keys) {
      if (key.endsWith(':events')) {
        const entries = await redis.xrange(key, '-', '+');
        stalls += entries.filter(([, fields]) => fields[0] === 'event' && fields[1] === 'stalled').length;
      } else if (key.endsWith(':failed')) {
        const base = key.slice(0, -'failed'.length);
        for (const id of await redis.zrange(key, 0, -1))
          if ((await redis.hget(`${base}${id}`, 'failedReason')) === LOCK_LOST_REASON) lockLost++;
      }
    }
    return { stalls, lockLost };
  } finally {
    redis.disconnect();
  }
}

interface Phase {
  wallMs: number;
  /** Reconcile jobs moved back to wait by a stalled-job check, and failed for stalling too often. */
  stalls: { stalls: number; lockLost: number };
  /** Reconcile requests per rollout (Events, the sync's applies and `GET /version` probes apart), per cluster. */
  reconcile: number[];
  events: number[];
  /** The sync's server-side applies per rollout, per cluster. */
  apply: number[];
  /** Requests on the sources' state ConfigMaps per rollout, per cluster (all in the local one). */
  state: number[];
  /** Requests by kind per rollout, summed over the clusters and divided by all their rollouts. */
  kinds: Array<[string, number]>;
  /** RSS of each reconciler process once every canary paused, MiB. */
  rss: number[];
  /** RSS of the poller (which syncs every source) at the same time, MiB. */
  pollerRss: number;
  conflicts: number;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const mean = (xs: readonly number[]) => sum(xs) / xs.length;

const progress = (message: string): void =>
  console.log(`  [${new Date().toISOString().slice(11, 19)}] ${message} (load ${loadavg()[0]?.toFixed(1)})`);

/**
 * One poller and K reconciler processes serving `sandboxes` (the first as the local cluster, the others
 * by `clusters:` contexts), one source each (`c<i>/` of one repository): until the first commit's Rollouts
 * are all Healthy, then one commit with a new image on all of them and a push webhook, until every canary
 * is at its first pause.
 */
async function phase(
  dir: string,
  redisUrl: string,
  gitRoot: string,
  gitUrl: string,
  prefix: string,
  sandboxes: readonly SandboxProcess[],
  k: number,
): Promise<Phase> {
  const barePath = createBareRepository(gitRoot, prefix);
  const repoUrl = `${gitUrl}/${prefix}.git`;
  const work = new WorkingCopy(join(dir, `${prefix}-work`));
  work.write(rolloutFiles(sandboxes.length, 'web:0'));
  work.commit('web:0 everywhere');
  await work.push(barePath);
  const kubeconfig = join(dir, `${prefix}.kubeconfig`);
  writeFileSync(kubeconfig, fleetKubeconfig(sandboxes));
  const config = join(dir, `${prefix}.yaml`);
  writeFileSync(
    config,
    stringify({
      clusters: sandboxes.slice(1).map((_, i) => ({ name: clusterName(i + 1), context: clusterName(i + 1) })),
      git: { cacheDir: join(dir, `${prefix}-cache`) },
      webhooks: { github: { secret: WEBHOOK_SECRET } },
      sources: sandboxes.map((_, i) => ({
        name: clusterName(i),
        url: repoUrl,
        branch: 'main',
        path: clusterName(i),
        interval: '1h',
        render: 'plain',
        namespace: 'default',
        // The first sandbox is the local cluster (the source's default).
        ...(i > 0 ? { cluster: clusterName(i) } : {}),
      })),
    }),
  );
  const children: ChildProcess[] = [];
  const watches: Array<Awaited<ReturnType<typeof keepWatchingRollouts>>> = [];
  try {
    for (const sandbox of sandboxes) watches.push(await keepWatchingRollouts(sandbox));
    for (let i = 0; i < k; i++)
      children.push(await startReconcilerProcess(kubeconfig, redisUrl, prefix, ['--config', config]));
    const poller = await startReconcilerProcess(kubeconfig, redisUrl, prefix, ['--config', config], {
      command: 'poller',
    });
    children.push(poller);
    progress(`${prefix}: ${k} reconcilers and a poller started; first commit syncing`);
    await reportingProgress(
      `${prefix}: Healthy`,
      watches,
      (_, st) => st.phase === 'Healthy' && st.currentPodHash === st.stableRS,
      Promise.all(watches.map((w) => w.waitFor(allHealthy(ROLLOUTS)))),
    );
    progress(`${prefix}: all ${sandboxes.length * ROLLOUTS} Healthy`);
    const before = watches.map((w) => new Map([...w.states].map(([name, s]) => [name, s.currentPodHash])));
    const kindsBefore = await Promise.all(sandboxes.map((s) => s.requestKinds()));
    const conflictsBefore = await Promise.all(sandboxes.map((s) => s.conflicts()));
    const started = performance.now();
    work.write(rolloutFiles(sandboxes.length, 'web:1'));
    const head = work.commit('web:1 everywhere');
    await work.push(barePath);
    const res = await postGithubPush({
      baseUrl: poller.url,
      secret: WEBHOOK_SECRET,
      repoUrl,
      head,
      fullName: `bench/${prefix}`,
    });
    if (!res.ok) throw new Error(`webhook answered ${res.status}`);
    await reportingProgress(
      `${prefix}: canaries at their first pause`,
      watches,
      (name, st, i) =>
        st.phase === 'Paused' &&
        st.currentPodHash !== undefined &&
        st.currentPodHash !== before[i]!.get(name),
      Promise.all(watches.map((w, i) => w.waitFor(allAtFirstPause(before[i]!)))),
    );
    const wallMs = performance.now() - started;
    progress(`${prefix}: every canary at its first pause after ${Math.round(wallMs)} ms`);
    const kinds = await Promise.all(
      sandboxes.map(async (s, i) =>
        Object.entries(await s.requestKinds())
          .map(([kind, n]): [string, number] => [kind, n - (kindsBefore[i]![kind] ?? 0)])
          // Each process probes each cluster every 5 s whatever it does: not a reconcile's request.
          .filter(([kind, n]) => n > 0 && kind !== 'GET /version'),
      ),
    );
    // The bench's Rollouts use no ConfigMap: every ConfigMap request is a source's state (kept in the local
    // cluster whichever cluster the source applies to), counted with the sync's applies, not the reconcile.
    const isState = ([kind]: [string, number]): boolean => / configmaps(\/|$| )/.test(kind);
    const splits = kinds.map((k) =>
      splitRequests(
        k.filter((entry) => !isState(entry)),
        ROLLOUTS,
      ),
    );
    const state = kinds.map((k) => sum(k.filter(isState).map(([, n]) => n)) / ROLLOUTS);
    const total = new Map<string, number>();
    for (const list of kinds) for (const [kind, n] of list) total.set(kind, (total.get(kind) ?? 0) + n);
    const conflicts = (await Promise.all(sandboxes.map((s) => s.conflicts()))).reduce(
      (sum, n, i) => sum + n - conflictsBefore[i]!,
      0,
    );
    const stalls = await reconcileStalls(redisUrl, prefix);
    progress(
      `${prefix}: ${stalls.stalls} reconcile jobs stalled, ${stalls.lockLost} failed for it and enqueued again`,
    );
    return {
      wallMs,
      stalls,
      reconcile: splits.map((s) => s.reconcile),
      events: splits.map((s) => s.events),
      apply: splits.map((s) => s.apply),
      state,
      kinds: [...total]
        .map(([kind, n]): [string, number] => [kind, n / (ROLLOUTS * sandboxes.length)])
        .sort((a, b) => b[1] - a[1]),
      rss: children.slice(0, k).map((c) => rssMiBOf(c.pid!)),
      pollerRss: rssMiBOf(poller.pid!),
      conflicts,
    };
  } finally {
    for (const w of watches) w.stop();
    for (const child of children) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
  }
}

const perRollout = (kinds: Array<[string, number]>): string =>
  kinds.map(([kind, n]) => `${kind} ${n.toFixed(2)}`).join('; ');

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const table: string[] = [
    '| clusters | rollouts | reconcilers | wall to all first pauses | reconcile req/rollout per cluster (mean, max) | one-cluster figure | ratio | sync applies per rollout | reconcilers RSS 1 cluster → C | MiB added per cluster | poller RSS 1 → C | stalled / lock-lost jobs (1 → C) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const redis = await startPrivateRedisServer();
  const tmp = makeTempDir('rollgate-clusters-scale-');
  const gitRoot = join(tmp.path, 'repos');
  const git = await serveGitRepositoriesInChild(gitRoot);
  try {
    for (const k of PROCESS_COUNTS) {
      // A fresh world per process count: a later round would otherwise supersede paused canaries.
      const sandboxes = await Promise.all(
        Array.from({ length: CLUSTERS + 1 }, () => startSandboxInChild({ readyDelayMs: READY_DELAY_MS })),
      );
      try {
        // One sandbox after another, each tried again once: 21 freshly started sandboxes at once on a loaded
        // machine can drop a connection (UND_ERR_SOCKET), which is not what this bench measures.
        for (const s of sandboxes)
          await installCrds(createKubeClients(s.kubeConfig), rollgateCrds()).catch(() =>
            installCrds(createKubeClients(s.kubeConfig), rollgateCrds()),
          );
        const [alone, ...fleet] = sandboxes;
        const one = await phase(tmp.path, redis.url, gitRoot, git.url, `cs-${k}-one`, [alone!], k);
        console.log(`  one cluster, K=${k}, requests per rollout: ${perRollout(one.kinds)}`);
        const many = await phase(tmp.path, redis.url, gitRoot, git.url, `cs-${k}-fleet`, fleet, k);
        console.log(`  ${CLUSTERS} clusters, K=${k}, requests per rollout: ${perRollout(many.kinds)}`);
        const reference = one.reconcile[0]!;
        const perCluster = mean(many.reconcile);
        const worst = Math.max(...many.reconcile);
        const worstAt = many.reconcile.indexOf(worst);
        const rssOne = sum(one.rss);
        const rssMany = sum(many.rss);
        const addedPerCluster = CLUSTERS > 1 ? (rssMany - rssOne) / (CLUSTERS - 1) : 0;
        const pollerAdded = CLUSTERS > 1 ? (many.pollerRss - one.pollerRss) / (CLUSTERS - 1) : 0;
        const label = `${CLUSTERS} clusters × ${ROLLOUTS}, ${k} reconciler${k > 1 ? 's' : ''}`;
        const rows: BenchResult[] = [
          {
            name: `${label}: one commit changing all → every canary at its first pause`,
            value: Math.round(many.wallMs),
            unit: 'ms',
            notes: `one cluster of ${ROLLOUTS} alone, same processes: ${Math.round(one.wallMs)} ms; ${many.conflicts} answered 409 (one cluster: ${one.conflicts}; each costs a fresh re-plan: a GET of the Rollout, lists of its ReplicaSets, pods and AnalysisRuns); reconcile jobs stalled ${many.stalls.stalls}, failed for it and enqueued again ${many.stalls.lockLost} (one cluster: ${one.stalls.stalls}, ${one.stalls.lockLost}); load average ${(loadavg()[0] ?? 0).toFixed(1)} on 2 cores`,
          },
          {
            name: `${label}: reconcile requests per rollout per cluster ÷ one cluster's`,
            value: Number((perCluster / reference).toFixed(2)),
            unit: '×',
            goal: '1× (equal)',
            notes: `mean ${perCluster.toFixed(2)}, max ${worst.toFixed(2)} (${clusterName(worstAt)}) over ${CLUSTERS} clusters, against ${reference.toFixed(2)} with one cluster (same run); sync applies ${mean(many.apply).toFixed(2)} against ${one.apply[0]!.toFixed(2)}, sources' state ConfigMaps ${mean(many.state).toFixed(2)} against ${one.state[0]!.toFixed(2)}; Events apart: ${mean(many.events).toFixed(2)} against ${one.events[0]!.toFixed(2)}`,
          },
          {
            name: `${label}: RSS added per cluster`,
            value: Number(addedPerCluster.toFixed(1)),
            unit: 'MiB',
            notes: `RSS of the ${k} reconciler${k > 1 ? 's' : ''} (sum) ${Math.round(rssOne)} MiB with 1 cluster → ${Math.round(rssMany)} MiB with ${CLUSTERS}, ${ROLLOUTS} Rollouts each; the poller ${Math.round(one.pollerRss)} → ${Math.round(many.pollerRss)} MiB (${pollerAdded.toFixed(1)} per cluster)`,
          },
        ];
        for (const row of rows) console.log(`  ${row.name}: ${row.value} ${row.unit} — ${row.notes ?? ''}`);
        results.push(...rows);
        table.push(
          `| ${CLUSTERS} | ${ROLLOUTS} | ${k} | ${Math.round(many.wallMs)} ms | ${perCluster.toFixed(2)}, ${worst.toFixed(2)} | ${reference.toFixed(2)} | ${(perCluster / reference).toFixed(2)}× | ${mean(many.apply).toFixed(2)} (one: ${one.apply[0]!.toFixed(2)}) | ${Math.round(rssOne)} → ${Math.round(rssMany)} MiB | ${addedPerCluster.toFixed(1)} | ${Math.round(one.pollerRss)} → ${Math.round(many.pollerRss)} MiB | ${one.stalls.stalls}/${one.stalls.lockLost} → ${many.stalls.stalls}/${many.stalls.lockLost} |`,
        );
        console.log(table.join('\n'));
      } finally {
        await Promise.all(sandboxes.map((s) => s.stop()));
      }
    }
    return results;
  } finally {
    await git.stop();
    await redis.stop();
    tmp.remove();
  }
}
