// Bench (issue 37): a 5,000-file commit's first fetch and pack indexing by a GitSource (isomorphic-git's fetch,
// Rollgate's pack indexer) beside native `git fetch` of the same commit at the same depth, and beside
// isomorphic-git's fetch with its own indexer (what a GitSource did before), into an empty repository each
// time, interleaved.
// The Git server runs in a child process so its git http-backend spawns are not charged to the fetch.
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import git from 'isomorphic-git';
import nodeHttp from 'isomorphic-git/http/node';
import { GitSource } from '../src/git/source.ts';
import { createBareRepository, gitEnv, makeTempDir } from '../test/support/git-fixtures.ts';
import { serveGitRepositoriesInChild } from './git-server-process.ts';
import type { BenchResult } from './run.ts';
import { median } from './stats.ts';

const FILES = Number(process.env.ROLLGATE_BENCH_FETCH_FILES ?? 5_000);
const ROUNDS = Number(process.env.ROLLGATE_BENCH_FETCH_ROUNDS ?? 5);
const PER_DIR = 100;
const GOAL_RATIO = 2;
const run$ = promisify(execFile);

function manifest(i: number): string {
  return [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: app-${i}`,
    `  namespace: team-${Math.floor(i / PER_DIR)}`,
    'data:',
    `  version: "1"`,
    `  owner: team-${Math.floor(i / PER_DIR)}`,
    `  note: "${'x'.repeat(i % 200)}"`,
    '',
  ].join('\n');
}

/** One commit holding FILES manifests, PER_DIR to a folder (a fast-import stream). */
function importStream(): string {
  const out = ['commit refs/heads/main', 'committer Bench <bench@rollgate.invalid> 1700000000 +0000'];
  const data = (text: string): void => {
    out.push(`data ${Buffer.byteLength(text)}`, text);
  };
  data(`${FILES} manifests`);
  for (let i = 0; i < FILES; i += 1) {
    out.push(`M 100644 inline envs/dir-${Math.floor(i / PER_DIR)}/app-${i}.yaml`);
    data(manifest(i));
  }
  out.push('');
  return out.join('\n');
}

interface Sample {
  wallMs: number;
  /** CPU of the fetch and the indexing: this process's for a GitSource, git's and its index-pack's for git. */
  cpuMs: number;
}

/** GNU time counts the CPU of git and of the index-pack it waits for. */
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

async function nativeFetch(dir: string, url: string): Promise<Sample> {
  execFileSync('git', ['init', '--quiet', '--bare', dir], { env: gitEnv });
  // The same request as a GitSource's first fetch: the branch tip alone, no tags.
  const args = ['fetch', '--quiet', '--depth', '1', '--no-tags', url, 'main:refs/heads/main'];
  const cpuFile = join(dir, 'cpu');
  const [file, argv] = GNU_TIME ? [GNU_TIME, ['-f', '%U %S', '-o', cpuFile, 'git', ...args]] : ['git', args];
  const started = performance.now();
  await run$(file, argv, { cwd: dir, env: gitEnv });
  const wallMs = performance.now() - started;
  const [user, system] = GNU_TIME ? readFileSync(cpuFile, 'utf8').trim().split(/\s+/).map(Number) : [];
  return { wallMs, cpuMs: user !== undefined && system !== undefined ? (user + system) * 1_000 : NaN };
}

/** isomorphic-git's fetch as it is, indexing the pack itself (pako, WebCrypto): the path replaced. */
async function isomorphicFetch(dir: string, url: string): Promise<Sample> {
  await git.init({ fs, gitdir: dir, bare: true, defaultBranch: 'main' });
  await git.addRemote({ fs, gitdir: dir, remote: 'origin', url });
  const cpu = process.cpuUsage();
  const started = performance.now();
  await git.fetch({
    fs,
    http: nodeHttp,
    gitdir: dir,
    url,
    ref: 'main',
    remoteRef: 'main',
    singleBranch: true,
    depth: 1,
    tags: false,
  });
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1_000 };
}

/** Bytes of the packs in a repository's objects/pack. */
function packSize(gitdir: string): number {
  const dir = join(gitdir, 'objects', 'pack');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.pack'))
    .reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

async function gitSourceFetch(dir: string, url: string): Promise<Sample> {
  const source = new GitSource({ name: 'big', url, branch: 'main', path: 'envs' }, { cacheDir: dir });
  const cpu = process.cpuUsage();
  const started = performance.now();
  await source.fetch();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  fetchedPackBytes = packSize(source.gitdir);
  return { wallMs, cpuMs: (used.user + used.system) / 1_000 };
}

let fetchedPackBytes = 0;

export async function run(): Promise<BenchResult[]> {
  const tmp = makeTempDir('rollgate-bench-fetch-');
  const root = join(tmp.path, 'repos');
  const bare = createBareRepository(root, 'big');
  execFileSync('git', ['fast-import', '--quiet'], {
    cwd: bare,
    env: gitEnv,
    input: importStream(),
    maxBuffer: 64 << 20,
  });
  const server = await serveGitRepositoriesInChild(root);
  const url = `${server.url}/big.git`;
  const ours: Sample[] = [];
  const native: Sample[] = [];
  const isomorphic: Sample[] = [];
  const loads: number[] = [];
  try {
    // A warm-up of each (page cache, the server's first spawns), then interleaved rounds, each into an
    // empty folder, taking turns going first.
    for (let round = -1; round < ROUNDS; round += 1) {
      loads.push(loadavg()[0] ?? 0);
      const order = round % 2 === 0 ? ['ours', 'native', 'isomorphic'] : ['isomorphic', 'native', 'ours'];
      for (const which of order) {
        const dir = join(tmp.path, `${which}-${round + 1}`);
        mkdirSync(dir, { recursive: true });
        const sample =
          which === 'ours'
            ? await gitSourceFetch(dir, url)
            : which === 'native'
              ? await nativeFetch(join(dir, 'repo.git'), url)
              : await isomorphicFetch(join(dir, 'repo.git'), url);
        if (round >= 0) (which === 'ours' ? ours : which === 'native' ? native : isomorphic).push(sample);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await server.stop();
    tmp.remove();
  }
  const oursMs = median(ours.map((s) => s.wallMs));
  const nativeMs = median(native.map((s) => s.wallMs));
  const isomorphicMs = median(isomorphic.map((s) => s.wallMs));
  const ratio = oursMs / nativeMs;
  const load = `load average ${median(loads).toFixed(1)} on ${availableParallelism()} cores`;
  return [
    {
      name: `first fetch + pack index, ${FILES.toLocaleString('en')} files (GitSource: isomorphic-git fetch, Rollgate's indexer)`,
      value: Math.round(oursMs),
      unit: 'ms',
      notes: `median of ${ROUNDS} interleaved rounds; this process's CPU ${Math.round(median(ours.map((s) => s.cpuMs)))} ms; fetched pack ${(fetchedPackBytes / 1024).toFixed(0)} KiB; ${load}`,
    },
    {
      name: 'floor: native git fetch --depth 1 of the same commit',
      value: Math.round(nativeMs),
      unit: 'ms',
      notes: `median of ${ROUNDS}, same rounds; git's own index-pack included; CPU ${Math.round(median(native.map((s) => s.cpuMs)))} ms`,
    },
    {
      name: "reference: isomorphic-git's fetch with its own indexer (the path before)",
      value: Math.round(isomorphicMs),
      unit: 'ms',
      notes: `median of ${ROUNDS}, same rounds; CPU ${Math.round(median(isomorphic.map((s) => s.cpuMs)))} ms; ${(isomorphicMs / nativeMs).toFixed(2)}× native`,
    },
    {
      name: 'fetch + index / native',
      value: Number(ratio.toFixed(2)),
      unit: '×',
      goal: `≤ ${GOAL_RATIO}×`,
      notes: ratio <= GOAL_RATIO ? 'met' : 'NOT met',
    },
  ];
}
