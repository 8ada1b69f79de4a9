// Bench (issue 35): C sandbox clusters (each in its own process) × R Rollouts, served by K `rollgate
// reconciler` processes on one Redis, the local cluster and C−1 registered by `clusters:` contexts. A new
// image on every Rollout of every cluster at once, until every canary is at its first pause. Against the
// same run's one-cluster figure (the same K processes serving one more sandbox alone, R Rollouts): the
// reconcile requests per rollout each cluster received, and the processes' RSS → MiB added per cluster.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { stringify } from 'yaml';
import { createKubeClients } from '../src/kube/client.ts';
import { installCrds } from '../src/kube/install-crds.ts';
import { rollgateCrds } from '../src/manifest/crds.ts';
import { sandboxKubeconfigDocument } from '../src/sandbox/sandbox-kubeconfig.ts';
import { startPrivateRedisServer } from '../src/demo/private-redis-server.ts';
import { makeTempDir } from '../test/support/git-fixtures.ts';
import type { BenchResult } from './run.ts';
import { startSandboxInChild, type SandboxProcess } from './sandbox-process.ts';
import {
  allAtFirstPause,
  allHealthy,
  createRollouts,
  rssMiBOf,
  setImages,
  splitRequests,
  startReconcilerProcess,
  watchRollouts,
} from './scale.bench.ts';

const CLUSTERS = Number(process.env.ROLLGATE_BENCH_CLUSTERS ?? 20);
const ROLLOUTS = Number(process.env.ROLLGATE_BENCH_CLUSTERS_ROLLOUTS ?? 100);
const PROCESS_COUNTS = (process.env.ROLLGATE_BENCH_CLUSTERS_PROCESSES ?? '1,2,4').split(',').map(Number);
/** Pods become Ready this long after creation (as in the scale bench). */
const READY_DELAY_MS = 100;

/** One kubeconfig with a context `c<i>` per sandbox; `c0` is the current one (the local cluster). */
function fleetKubeconfig(sandboxes: readonly SandboxProcess[]): string {
  const docs = sandboxes.map((s) => sandboxKubeconfigDocument(s.url));
  const entry = (key: 'clusters' | 'users' | 'contexts', i: number) =>
    (docs[i]![key] as Array<Record<string, unknown>>)[0]!;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: docs.map((_, i) => ({ ...entry('clusters', i), name: `c${i}` })),
    users: docs.map((_, i) => ({ ...entry('users', i), name: `c${i}` })),
    contexts: docs.map((_, i) => ({
      name: `c${i}`,
      context: { cluster: `c${i}`, user: `c${i}`, namespace: 'default' },
    })),
    'current-context': 'c0',
    preferences: {},
  });
}

interface Phase {
  wallMs: number;
  /** Reconcile requests per rollout (Events, the bench's image patch and `GET /version` probes apart), per cluster. */
  reconcile: number[];
  events: number[];
  /** RSS of each reconciler process once every canary paused, MiB. */
  rss: number[];
  conflicts: number;
}

/**
 * K reconciler processes serving `sandboxes` (the first as the local cluster, the others by `clusters:`
 * contexts), each holding R Rollouts already created: until all Healthy, then a new image on all, until
 * every canary is at its first pause.
 */
async function phase(
  dir: string,
  redisUrl: string,
  prefix: string,
  sandboxes: readonly SandboxProcess[],
  k: number,
): Promise<Phase> {
  const kubeconfig = join(dir, `${prefix}.kubeconfig`);
  writeFileSync(kubeconfig, fleetKubeconfig(sandboxes));
  const config = join(dir, `${prefix}.yaml`);
  writeFileSync(
    config,
    stringify({ clusters: sandboxes.slice(1).map((_, i) => ({ name: `c${i + 1}`, context: `c${i + 1}` })) }),
  );
  const children: ChildProcess[] = [];
  const watches: Array<Awaited<ReturnType<typeof watchRollouts>>> = [];
  try {
    for (let i = 0; i < k; i++)
      children.push(await startReconcilerProcess(kubeconfig, redisUrl, prefix, ['--config', config]));
    for (const sandbox of sandboxes) watches.push(await watchRollouts(sandbox));
    await Promise.all(watches.map((w) => w.waitFor(allHealthy(ROLLOUTS))));
    // Fresh watches for the change: client-node ends a watch idle for 30 s, which a cluster Healthy
    // early can be while the others settle. Each starts with an ADDED for every Rollout.
    for (const w of watches.splice(0)) w.stop();
    for (const sandbox of sandboxes) watches.push(await watchRollouts(sandbox));
    await Promise.all(watches.map((w) => w.waitFor((states) => states.size === ROLLOUTS)));
    const before = watches.map((w) => new Map([...w.states].map(([name, s]) => [name, s.currentPodHash])));
    const kindsBefore = await Promise.all(sandboxes.map((s) => s.requestKinds()));
    const conflictsBefore = await Promise.all(sandboxes.map((s) => s.conflicts()));
    const started = performance.now();
    await Promise.all(sandboxes.map((s) => setImages(s, ROLLOUTS, 'web:1')));
    await Promise.all(watches.map((w, i) => w.waitFor(allAtFirstPause(before[i]!))));
    const wallMs = performance.now() - started;
    const splits = await Promise.all(
      sandboxes.map(async (s, i) => {
        const kinds = Object.entries(await s.requestKinds())
          .map(([kind, n]): [string, number] => [kind, n - (kindsBefore[i]![kind] ?? 0)])
          // Each process probes each cluster every 5 s whatever it does: not a reconcile's request.
          .filter(([kind, n]) => n > 0 && kind !== 'GET /version');
        return splitRequests(kinds, ROLLOUTS, 1);
      }),
    );
    const conflicts = (await Promise.all(sandboxes.map((s) => s.conflicts()))).reduce(
      (sum, n, i) => sum + n - conflictsBefore[i]!,
      0,
    );
    return {
      wallMs,
      reconcile: splits.map((s) => s.reconcile),
      events: splits.map((s) => s.events),
      rss: children.map((c) => rssMiBOf(c.pid!)),
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

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const mean = (xs: readonly number[]) => sum(xs) / xs.length;

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const table: string[] = [
    '| clusters | rollouts | processes | wall to all first pauses | reconcile req/rollout per cluster (mean, max) | one-cluster figure | ratio | RSS 1 cluster → N clusters | MiB added per cluster |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const redis = await startPrivateRedisServer();
  const tmp = makeTempDir('rollgate-clusters-scale-');
  try {
    for (const k of PROCESS_COUNTS) {
      // A fresh world per process count: a later round would otherwise supersede paused canaries.
      const sandboxes = await Promise.all(
        Array.from({ length: CLUSTERS + 1 }, () => startSandboxInChild({ readyDelayMs: READY_DELAY_MS })),
      );
      try {
        await Promise.all(
          sandboxes.map(async (s) => {
            await installCrds(createKubeClients(s.kubeConfig), rollgateCrds());
            await createRollouts(s, ROLLOUTS, 'web:0');
          }),
        );
        const [alone, ...fleet] = sandboxes;
        const one = await phase(tmp.path, redis.url, `cs-${k}-one`, [alone!], k);
        const many = await phase(tmp.path, redis.url, `cs-${k}-fleet`, fleet, k);
        const reference = one.reconcile[0]!;
        const perCluster = mean(many.reconcile);
        const worst = Math.max(...many.reconcile);
        const rssOne = sum(one.rss);
        const rssMany = sum(many.rss);
        const addedPerCluster = CLUSTERS > 1 ? (rssMany - rssOne) / (CLUSTERS - 1) : 0;
        const label = `${CLUSTERS} clusters × ${ROLLOUTS}, ${k} process${k > 1 ? 'es' : ''}`;
        const rows: BenchResult[] = [
          {
            name: `${label}: new image on all → every canary at its first pause`,
            value: Math.round(many.wallMs),
            unit: 'ms',
            notes: `one cluster of ${ROLLOUTS} alone, same processes: ${Math.round(one.wallMs)} ms; ${many.conflicts} answered 409; load average ${(loadavg()[0] ?? 0).toFixed(1)} on 2 cores`,
          },
          {
            name: `${label}: reconcile requests per rollout per cluster ÷ one cluster's`,
            value: Number((perCluster / reference).toFixed(2)),
            unit: '×',
            goal: '1× (equal)',
            notes: `mean ${perCluster.toFixed(2)}, max ${worst.toFixed(2)} over ${CLUSTERS} clusters, against ${reference.toFixed(2)} with one cluster (same run); Events apart: ${mean(many.events).toFixed(2)} against ${one.events[0]!.toFixed(2)}`,
          },
          {
            name: `${label}: RSS added per cluster`,
            value: Number(addedPerCluster.toFixed(1)),
            unit: 'MiB',
            notes: `RSS of the ${k} process${k > 1 ? 'es' : ''} (sum) ${Math.round(rssOne)} MiB with 1 cluster → ${Math.round(rssMany)} MiB with ${CLUSTERS}, ${ROLLOUTS} Rollouts each`,
          },
        ];
        for (const row of rows) console.log(`  ${row.name}: ${row.value} ${row.unit} — ${row.notes ?? ''}`);
        results.push(...rows);
        table.push(
          `| ${CLUSTERS} | ${ROLLOUTS} | ${k} | ${Math.round(many.wallMs)} ms | ${perCluster.toFixed(2)}, ${worst.toFixed(2)} | ${reference.toFixed(2)} | ${(perCluster / reference).toFixed(2)}× | ${Math.round(rssOne)} → ${Math.round(rssMany)} MiB | ${addedPerCluster.toFixed(1)} |`,
        );
      } finally {
        await Promise.all(sandboxes.map((s) => s.stop()));
      }
    }
    console.log(table.join('\n'));
    return results;
  } finally {
    await redis.stop();
    tmp.remove();
  }
}
