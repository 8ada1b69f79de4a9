// Bench: how long a restarted `rollgate run` takes from process start to its first `/readyz` 200, against an
// in-process sandbox whose CRDs are already installed and a private redis-server (issue 14, item 6).
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli } from '../scripts/build.ts';
import { createKubeClients } from '../src/kube/client.ts';
import { installCrds } from '../src/kube/install-crds.ts';
import { freeLoopbackPort } from '../src/demo/free-loopback-port.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { rollgateCrds } from '../src/manifest/crds.ts';
import { redisForBench } from './private-redis.ts';
import type { BenchResult } from './run.ts';
import { median, percentile } from './stats.ts';

const repo = join(import.meta.dirname, '..');
const RUNS = Number(process.env.ROLLGATE_BENCH_RESTART_RUNS ?? 10);
const FAULT_RUNS = Number(process.env.ROLLGATE_BENCH_RESTART_FAULT_RUNS ?? 5);
const GOAL_MS = 2_000;
/** A start slower than this is a failed run, not a sample. */
const LIMIT_MS = 60_000;

/**
 * The CLI as `npm ci` leaves it: bin/, a copy of src/ and workers/ and the bundle built after them (as
 * bench/cli.bench.ts does). ROLLGATE_BENCH_CLI_ENTRY measures another entry as it is instead.
 */
async function installCli(dir: string): Promise<string> {
  const entry = process.env.ROLLGATE_BENCH_CLI_ENTRY;
  if (entry) return entry;
  const root = join(dir, 'rollgate');
  mkdirSync(join(root, 'bin'), { recursive: true });
  copyFileSync(join(repo, 'bin', 'rollgate.js'), join(root, 'bin', 'rollgate.js'));
  copyFileSync(join(repo, 'package.json'), join(root, 'package.json'));
  for (const folder of ['src', 'workers'])
    cpSync(join(repo, folder), join(root, folder), { recursive: true });
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir');
  await buildCli(join(root, 'dist', 'cli'));
  return join(root, 'bin', 'rollgate.js');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts `rollgate run`, polls /readyz every 20 ms until 200, then stops it (SIGTERM, SIGKILL after 10 s). */
async function oneRestart(entry: string, args: string[], port: number): Promise<number> {
  const { ROLLGATE_DEV: _dev, ...env } = process.env;
  const started = performance.now();
  const child = spawn(process.execPath, [entry, ...args, '--port', String(port)], {
    env: { ...env, ROLLGATE_CONFIG: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  try {
    for (;;) {
      if (exitCode !== undefined) throw new Error(`rollgate run exited ${exitCode} before ready: ${stderr}`);
      if (performance.now() - started > LIMIT_MS) throw new Error(`not ready after ${LIMIT_MS} ms`);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
        .then((res) => res.status === 200)
        .catch(() => false);
      if (ready) return performance.now() - started;
      await sleep(20);
    }
  } finally {
    child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(kill);
  }
}

export async function run(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-restart-bench-'));
  const sandbox = await startSandbox({});
  const redis = await redisForBench();
  try {
    const entry = await installCli(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
    // A restart: the CRDs are there, as the first start (or `rollgate install`) left them.
    await installCrds(createKubeClients(sandbox.kubeConfig), rollgateCrds());
    const config = join(dir, 'rollgate.yaml');
    writeFileSync(
      config,
      [
        `redis: { url: "${redis.url}", prefix: "restart-bench" }`,
        `server: { host: "127.0.0.1" }`,
        `git: { cacheDir: "${join(dir, 'git')}" }`,
        'log: { level: warn, format: json }',
        '',
      ].join('\n'),
    );
    const args = ['run', '--config', config, '--kubeconfig', kubeconfig];
    const samples: number[] = [];
    const loads: number[] = [];
    // One warm-up start (page cache, the sandbox's first requests), then the measured ones.
    for (let round = -1; round < RUNS; round += 1) {
      loads.push(loadavg()[0] ?? 0);
      const ms = await oneRestart(entry, args, await freeLoopbackPort());
      if (round >= 0) samples.push(ms);
    }
    // A first start on a fresh cluster under the issue's faults (50 % of writes 409, 20 % of requests 500):
    // how long the retries take with the real backoff. The CRDs are removed (faults off) before each.
    const clients = createKubeClients(sandbox.kubeConfig);
    const faulted: number[] = [];
    for (let round = 0; round < FAULT_RUNS; round += 1) {
      Object.assign(sandbox.faults, { conflictRate: 0, errorRate: 0 });
      for (const crd of rollgateCrds())
        await clients.apiextensions.deleteCustomResourceDefinition({
          name: (crd as { metadata: { name: string } }).metadata.name,
        });
      Object.assign(sandbox.faults, { conflictRate: 0.5, errorRate: 0.2 });
      loads.push(loadavg()[0] ?? 0);
      faulted.push(await oneRestart(entry, args, await freeLoopbackPort()));
    }
    Object.assign(sandbox.faults, { conflictRate: 0, errorRate: 0 });
    const load = median(loads);
    return [
      {
        name: 'rollgate run, fresh cluster, 50 % 409 + 20 % 500: start → first /readyz 200',
        value: Math.round(median(faulted)),
        unit: 'ms',
        goal: 'ready',
        notes: `${faulted.length} of ${FAULT_RUNS} starts ready; p95 ${Math.round(percentile(faulted, 95))} ms, max ${Math.round(Math.max(...faulted))} ms (CRDs created through retries with the real backoff)`,
      },
      {
        name: 'rollgate run: process start → first /readyz 200',
        value: Math.round(median(samples)),
        unit: 'ms',
        goal: `≤ ${GOAL_MS} ms`,
        notes: `p95 ${Math.round(percentile(samples, 95))} ms, min ${Math.round(Math.min(...samples))} ms, max ${Math.round(Math.max(...samples))} ms; median of ${RUNS} starts (CRDs installed, ${process.env.ROLLGATE_BENCH_CLI_ENTRY ? `entry ${process.env.ROLLGATE_BENCH_CLI_ENTRY}` : 'bundle from `npm run build`'}), load average ${load.toFixed(1)} on ${availableParallelism()} cores`,
      },
    ];
  } finally {
    await redis.stop();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
