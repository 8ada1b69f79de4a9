// Bench (issue 19): N Git sources (1,000 by default), each its own bare repository behind git http-backend,
// polled every 30 s with no change. What the Rollgate poller spends per second (share of one core) and per
// poll, beside the sandbox and Redis, and a floor from the same run: the ref check alone (one `ls-refs`
// request from a GitSource), made N times from the bench.
import { cpSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { GitSource } from '../src/git/source.ts';
import { createRedisConnection } from '../src/queue/redis-connection.ts';
import { createKubeClients } from '../src/kube/client.ts';
import { ConfigMapSourceStateStore } from '../src/sync/source-state-store.ts';
import { configMapYaml, createBareRepository, WorkingCopy } from '../test/support/git-fixtures.ts';
import { startBenchWorld } from './bench-world.ts';
import { cpuSecondsOf, ownCpuSeconds } from './process-cpu.ts';
import type { BenchResult } from './run.ts';

const N = Number(process.env.ROLLGATE_BENCH_IDLE_N ?? 1000);
const INTERVAL_S = 30;
/** Measured over this long once every source has synced: two poll rounds. */
const WINDOW_MS = Number(process.env.ROLLGATE_BENCH_IDLE_WINDOW_MS ?? 2 * INTERVAL_S * 1000);
const LIMIT_MS = 900_000;
const STATE_NAMESPACE = 'rollgate-system';

const sourceName = (i: number): string => `s-${String(i).padStart(4, '0')}`;

export async function run(): Promise<BenchResult[]> {
  const world = await startBenchWorld({
    tempPrefix: 'rollgate-idle-sources-bench-',
    readyDelayMs: 100,
  });
  const { sandbox, redis } = world;
  try {
    // One repository pushed once, then copied: N distinct remotes without N pushes.
    const template = createBareRepository(join(world.dir, 'template'), 'app');
    const work = new WorkingCopy(join(world.dir, 'work'));
    work.write({ 'config.yaml': configMapYaml('app-config', { v: '1' }) });
    work.commit('one ConfigMap');
    await work.push(template);
    for (let i = 0; i < N; i++)
      cpSync(template, join(world.gitRoot, `${sourceName(i)}.git`), { recursive: true });
    const git = await world.serveGit();
    const loads = [loadavg()[0] ?? 0];
    const runtime = world.rollgateRuntime('idle-bench', {
      kubernetes: { stateNamespace: STATE_NAMESPACE },
      git: { cacheDir: join(world.dir, 'cache') },
      // Each source applies its ConfigMap in a namespace of its own, so the N do not collide.
      sources: Array.from({ length: N }, (_, i) => ({
        name: sourceName(i),
        url: `${git.url}/${sourceName(i)}.git`,
        branch: 'main',
        path: '.',
        namespace: sourceName(i),
        interval: `${INTERVAL_S}s`,
      })),
    });
    // Sources whose commit is recorded, read as the dashboard reads them (one list of the state objects).
    const states = new ConfigMapSourceStateStore(createKubeClients(sandbox.kubeConfig), STATE_NAMESPACE);
    const synced = async (): Promise<number> => {
      try {
        return [...(await states.readAll()).values()].filter((s) => s.commit !== undefined).length;
      } catch {
        return 0;
      }
    };
    const startedAt = performance.now();
    await world.startRollgate(runtime, 'poller');
    while ((await synced()) < N) {
      if (performance.now() - startedAt > LIMIT_MS) throw new Error(`not all ${N} sources synced`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const firstSyncMs = performance.now() - startedAt;
    // Past the first unchanged poll of every source (which runs its first drift check, then one every
    // 5 minutes): the window holds the steady state of unchanged polls.
    await new Promise((resolve) => setTimeout(resolve, (INTERVAL_S + 5) * 1000));
    loads.push(loadavg()[0] ?? 0);
    // Commands Redis processed (INFO stats): how much queue and record traffic a poll costs, free of the
    // CPU noise of a shared machine. The bench's own INFO calls add two.
    const redisStats = createRedisConnection(redis.url);
    const redisCommands = async (): Promise<number> =>
      Number(/total_commands_processed:(\d+)/.exec(await redisStats.info('stats'))?.[1] ?? 0);
    const before = {
      redisCommands: await redisCommands(),
      rollgate: ownCpuSeconds(),
      sandbox: cpuSecondsOf(sandbox.pid),
      redis: cpuSecondsOf(redis.pid),
      gitRequests: git.requestCount(),
      apiRequests: await sandbox.requests(),
    };
    const windowStarted = performance.now();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const seconds = (performance.now() - windowStarted) / 1000;
    const rollgateCpu = ownCpuSeconds() - before.rollgate;
    const sandboxCpu = cpuSecondsOf(sandbox.pid) - before.sandbox;
    const redisCpu = cpuSecondsOf(redis.pid) - before.redis;
    const gitRequests = git.requestCount() - before.gitRequests;
    const apiRequests = (await sandbox.requests()) - before.apiRequests;
    const redisCommandCount = (await redisCommands()) - before.redisCommands;
    redisStats.disconnect();
    const rss = process.memoryUsage().rss / 2 ** 20;
    loads.push(loadavg()[0] ?? 0);
    await world.stopRollgate();

    // Floor: the ref check alone, from a GitSource per source (each first one pays the capability advert).
    const checkers = Array.from(
      { length: N },
      (_, i) =>
        new GitSource(
          { name: sourceName(i), url: `${git.url}/${sourceName(i)}.git`, branch: 'main', path: '.' },
          { cacheDir: join(world.dir, 'floor-cache') },
        ),
    );
    for (const c of checkers) await c.remoteHead();
    const floorCpu0 = ownCpuSeconds();
    for (const c of checkers) await c.remoteHead();
    const floorCpuPerCheck = (ownCpuSeconds() - floorCpu0) / N;
    loads.push(loadavg()[0] ?? 0);

    const polls = gitRequests;
    const perPollMs = (rollgateCpu * 1000) / Math.max(polls, 1);
    const load = `load average ${loads.map((l) => l.toFixed(1)).join(' → ')} on 2 cores`;
    return [
      {
        name: `${N} unchanged sources every ${INTERVAL_S} s: Rollgate poller CPU`,
        value: Number(((rollgateCpu / seconds) * 100).toFixed(1)),
        unit: '% of one core',
        goal: '≤ 10 %',
        notes: `${rollgateCpu.toFixed(1)} s CPU over ${seconds.toFixed(0)} s; ${polls} ref checks at the Git server (${(polls / seconds).toFixed(1)}/s, expected ${(N / INTERVAL_S).toFixed(1)}/s); RSS ${rss.toFixed(0)} MiB; ${load}`,
      },
      {
        name: 'Rollgate CPU per unchanged poll',
        value: Number(perPollMs.toFixed(2)),
        unit: 'ms',
        notes: `floor (same run: one ls-refs ref check from a GitSource): ${(floorCpuPerCheck * 1000).toFixed(2)} ms, ratio ${(perPollMs / Math.max(floorCpuPerCheck * 1000, 0.001)).toFixed(1)}×`,
      },
      {
        name: 'same window: sandbox and Redis CPU',
        value: Number((((sandboxCpu + redisCpu) / seconds) * 100).toFixed(1)),
        unit: '% of one core',
        notes: `sandbox ${sandboxCpu.toFixed(1)} s (${(apiRequests / Math.max(polls, 1)).toFixed(2)} API requests per poll), Redis ${redisCpu.toFixed(1)} s (${(redisCommandCount / Math.max(polls, 1)).toFixed(1)} commands per poll)`,
      },
      {
        name: `first sync of all ${N} sources (start → every commit recorded)`,
        value: Math.round(firstSyncMs),
        unit: 'ms',
        notes: 'one fetch, diff and apply per source; not a goal, for context',
      },
    ];
  } finally {
    await world.stop();
  }
}
