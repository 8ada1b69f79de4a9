// Bench: how fast each short-lived `rollgate` verb answers (wall, peak RSS) beside kubectl doing the same kind
// of thing against the same sandbox, in the same run, interleaved, so a busy machine slows both alike:
// `kubectl get` is the peer of get/status/list, `kubectl patch` of the verbs that write (issue 37: ≤ 2×).
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildCli } from '../scripts/build.ts';
import { createKubeClients } from '../src/kube/client.ts';
import { installCrds } from '../src/kube/install-crds.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from '../src/manifest/api-version.ts';
import { rollgateCrds } from '../src/manifest/crds.ts';
import type { BenchResult } from './run.ts';
import { median, percentile } from './stats.ts';

const repo = join(import.meta.dirname, '..');
const RUNS = Number(process.env.ROLLGATE_BENCH_CLI_RUNS ?? 15);
const KUBECTL = process.env.KUBECTL ?? 'kubectl';
/**
 * The Node that runs the CLI (and writes its code caches): this one, or another binary, e.g. Node 24 as
 * CI and the image run it (`npx -y node@24` installs one; point this at its bin/node).
 */
const NODE = process.env.ROLLGATE_BENCH_CLI_NODE ?? process.execPath;
/** GNU time reports a child's peak RSS (`%M`, KiB); Node only reports its own. */
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
/** Issue 37: every verb within 2× kubectl of its kind, medians of the same interleaved run. */
const BUDGET_RATIO = 2;
const NAME = 'bench';

const MANIFEST = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: ${NAME}
spec:
  replicas: 2
  selector:
    matchLabels: {app: ${NAME}}
  template:
    metadata:
      labels: {app: ${NAME}}
    spec:
      containers: [{name: app, image: "app:1.0"}]
  strategy:
    canary:
      steps: [{setWeight: 50}, {pause: {duration: 1h}}, {setWeight: 100}]
`;

/**
 * The CLI as `npm ci` leaves it in a checkout: bin/, a copy of src/ and workers/ (so bin's freshness check
 * walks as many files as in a checkout), and the bundle built after them. A private copy, so edits in
 * the working tree during the run cannot send bin back to the source. ROLLGATE_BENCH_CLI_ENTRY measures
 * another entry as it is instead (an older checkout's bin/rollgate.js, for a before/after).
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
  await buildCli(join(root, 'dist', 'cli'), { node: NODE });
  return join(root, 'bin', 'rollgate.js');
}

interface Sample {
  wallMs: number;
  rssKiB: number | undefined;
}

/** Runs one command to completion (stdout discarded); fails the bench when it does not exit 0. */
async function measure(command: string, args: string[], rssFile: string): Promise<Sample> {
  const [file, argv] = GNU_TIME ? [GNU_TIME, ['-f', '%M', '-o', rssFile, command, ...args]] : [command, args];
  const { ROLLGATE_DEV: _dev, ...env } = process.env;
  const started = performance.now();
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(file, argv, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`);
  const rss = GNU_TIME
    ? Number.parseInt(readFileSync(rssFile, 'utf8').trim().split('\n').pop() ?? '', 10)
    : NaN;
  return { wallMs, rssKiB: Number.isFinite(rss) ? rss : undefined };
}

export async function run(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-cli-bench-'));
  const sandbox = await startSandbox({});
  try {
    const entry = await installCli(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
    const clients = createKubeClients(sandbox.kubeConfig);
    await installCrds(clients, rollgateCrds());
    const manifest = join(dir, 'rollout.yaml');
    writeFileSync(manifest, MANIFEST);
    await clients.custom.createNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      body: { ...(parse(MANIFEST) as object), apiVersion: ROLLGATE_API_VERSION },
    });

    const cluster = [NAME, '-n', 'default', '--kubeconfig', kubeconfig];
    const rollouts = `rollouts.${ROLLGATE_API_GROUP}`;
    const KUBECTL_GET = 'kubectl get rollout NAME';
    const KUBECTL_PATCH = 'kubectl patch rollout NAME';
    const commands: Array<{ label: string; command: string; args: string[]; peer?: string }> = [
      { label: 'kubectl version --client', command: KUBECTL, args: ['version', '--client'] },
      { label: KUBECTL_GET, command: KUBECTL, args: ['get', rollouts, ...cluster] },
      {
        label: KUBECTL_PATCH,
        command: KUBECTL,
        args: [
          'patch',
          rollouts,
          ...cluster,
          '--type',
          'merge',
          '-p',
          '{"metadata":{"annotations":{"bench":"x"}}}',
        ],
      },
      { label: 'rollgate --help', command: NODE, args: [entry, '--help'] },
      { label: 'rollgate validate FILE', command: NODE, args: [entry, 'validate', manifest] },
      { label: 'rollgate plan FILE', command: NODE, args: [entry, 'plan', manifest] },
      ...['status', 'get rollout'].map((verb) => ({
        label: `rollgate ${verb} NAME`,
        command: NODE,
        args: [entry, ...verb.split(' '), ...cluster],
        peer: KUBECTL_GET,
      })),
      ...['promote', 'pause', 'resume', 'abort', 'retry', 'restart'].map((verb) => ({
        label: `rollgate ${verb} NAME`,
        command: NODE,
        args: [entry, verb, ...cluster],
        peer: KUBECTL_PATCH,
      })),
      {
        label: 'rollgate list rollouts',
        command: NODE,
        args: [entry, 'list', 'rollouts', '-n', 'default', '--kubeconfig', kubeconfig],
        peer: KUBECTL_GET,
      },
    ];
    const samples = new Map<string, Sample[]>(commands.map((c) => [c.label, []]));
    const loads: number[] = [];
    const rssFile = join(dir, 'rss');
    // One warm-up round (page cache, the sandbox's first requests), then interleaved rounds.
    for (let round = -1; round < RUNS; round += 1) {
      loads.push(loadavg()[0] ?? 0);
      for (const { label, command, args } of commands) {
        const sample = await measure(command, args, rssFile);
        if (round >= 0) samples.get(label)?.push(sample);
      }
    }

    const stats = (label: string) => {
      const list = samples.get(label) ?? [];
      const wall = list.map((s) => s.wallMs);
      const rss = list.flatMap((s) => (s.rssKiB === undefined ? [] : [s.rssKiB]));
      return {
        median: median(wall),
        p95: percentile(wall, 95),
        rssMiB: rss.length > 0 ? median(rss) / 1024 : undefined,
      };
    };
    const baseline = stats('kubectl version --client');
    const rssNote = (rssMiB: number | undefined): string =>
      rssMiB === undefined ? 'peak RSS not measured (no /usr/bin/time)' : `peak RSS ${rssMiB.toFixed(0)} MiB`;
    const load = median(loads);
    const results: BenchResult[] = [
      {
        name: 'kubectl version --client (baseline)',
        value: Math.round(baseline.median),
        unit: 'ms',
        notes: `p95 ${Math.round(baseline.p95)} ms; ${rssNote(baseline.rssMiB)}; CLI on Node ${spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim()}; median of ${RUNS} interleaved rounds, load average ${load.toFixed(1)} on ${availableParallelism()} cores`,
      },
    ];
    for (const { label, peer } of commands.slice(1)) {
      const s = stats(label);
      if (peer === undefined) {
        results.push({
          name: label,
          value: Math.round(s.median),
          unit: 'ms',
          notes: `p95 ${Math.round(s.p95)} ms; ${rssNote(s.rssMiB)}`,
        });
        continue;
      }
      const floor = stats(peer);
      const ratio = s.median / floor.median;
      results.push({
        name: label,
        value: Math.round(s.median),
        unit: 'ms',
        goal: `≤ ${BUDGET_RATIO}× ${peer}`,
        notes: `${ratio.toFixed(2)}× ${peer} (${Math.round(floor.median)} ms) ${ratio <= BUDGET_RATIO ? 'met' : 'NOT met'}; p95 ${Math.round(s.p95)} ms; ${rssNote(s.rssMiB)}`,
      });
    }
    return results;
  } finally {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
