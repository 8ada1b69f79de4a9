// Benchmark: GitSource diff of one changed file in a 10,000-manifest repository vs native `git diff --name-only`.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { serveGitRepositories } from '../src/git/smart-http-server.ts';
import { GitSource } from '../src/git/source.ts';
import { createBareRepository, git, gitEnv, makeTempDir } from '../test/support/git-fixtures.ts';
import type { BenchResult } from './run.ts';
import { median } from './stats.ts';

const DIRS = 100;
const FILES_PER_DIR = 100;
const ROUNDS = 30;

function manifest(dir: number, file: number, version: number): string {
  const name = `app-${dir}-${file}`;
  return [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${name}`,
    `  namespace: team-${dir}`,
    'data:',
    `  version: "${version}"`,
    `  owner: team-${dir}`,
    '',
  ].join('\n');
}

function pad(n: number): string {
  return String(n).padStart(3, '0');
}

/** Where round `i` changes one manifest: a different folder and file each time. */
function changedFile(round: number): { dir: number; file: number } {
  return { dir: (round * 37) % DIRS, file: (round * 53) % FILES_PER_DIR };
}

/**
 * A fast-import stream: one commit with DIRS × FILES_PER_DIR manifests, then ROUNDS + 1 commits that
 * each change one manifest (as a stream of small pushes would).
 */
function importStream(): string {
  const out: string[] = [];
  const data = (text: string): void => {
    out.push(`data ${Buffer.byteLength(text)}`, text);
  };
  out.push('commit refs/heads/main', 'mark :1', 'committer Bench <bench@rollgate.invalid> 1700000000 +0000');
  data('10,000 manifests');
  for (let d = 0; d < DIRS; d += 1) {
    for (let f = 0; f < FILES_PER_DIR; f += 1) {
      out.push(`M 100644 inline envs/prod/dir-${pad(d)}/app-${pad(f)}.yaml`);
      data(manifest(d, f, 1));
    }
  }
  for (let round = 0; round <= ROUNDS; round += 1) {
    const { dir, file } = changedFile(round);
    out.push(
      'commit refs/heads/main',
      `mark :${round + 2}`,
      `committer Bench <bench@rollgate.invalid> ${1700000060 + round} +0000`,
    );
    data(`change one manifest (${round})`);
    out.push(`from :${round + 1}`, `M 100644 inline envs/prod/dir-${pad(dir)}/app-${pad(file)}.yaml`);
    data(manifest(dir, file, round + 2));
  }
  out.push('');
  return out.join('\n');
}

/** Runs the benchmark; see docs/sources.md for what the numbers mean. */
export async function run(): Promise<BenchResult[]> {
  const tmp = makeTempDir('rollgate-bench-diff-');
  const root = join(tmp.path, 'repos');
  const bare = createBareRepository(root, 'big');
  execFileSync('git', ['fast-import', '--quiet'], {
    cwd: bare,
    env: gitEnv,
    input: importStream(),
    maxBuffer: 64 << 20,
  });
  // commits[0] holds the 10,000 manifests; commits[i] (i ≥ 1) changes one manifest of commits[i - 1].
  const commits = git(bare, ['rev-list', '--reverse', 'refs/heads/main']).split('\n');
  const server = await serveGitRepositories({ root });
  try {
    const url = `${server.url}/big.git`;
    const config = { name: 'big', url, branch: 'main', path: 'envs/prod' };
    const source = new GitSource(config, { cacheDir: join(tmp.path, 'cache') });
    // Fetch commit by commit, as polls after each push would.
    const fetches: number[] = [];
    let initialFetchMs = 0;
    for (const [i, commit] of commits.entries()) {
      git(bare, ['update-ref', 'refs/heads/main', commit]);
      const started = performance.now();
      await source.fetch();
      if (i === 0) initialFetchMs = performance.now() - started;
      else fetches.push(performance.now() - started);
    }

    const at = (i: number): string => commits[i] ?? '';
    const cold = new GitSource(config, { cacheDir: join(tmp.path, 'cache') });
    let started = performance.now();
    const first = await cold.diffReport(at(0), at(1));
    const coldMs = performance.now() - started;
    if (first.changes.length !== 1 || first.changes[0]?.change !== 'changed') {
      throw new Error(
        `expected exactly one changed object, got ${JSON.stringify(first.changes.map((c) => c.key))}`,
      );
    }

    // Steady state: each diff compares the previous poll's commit with a new one.
    await source.diffReport(at(0), at(1));
    const ours: number[] = [];
    let reads = first.reads;
    for (let i = 1; i <= ROUNDS; i += 1) {
      started = performance.now();
      const report = await source.diffReport(at(i), at(i + 1));
      ours.push(performance.now() - started);
      reads = report.reads;
      if (report.changes.length !== 1) throw new Error(`round ${i}: ${report.changes.length} changes`);
    }
    const native: number[] = [];
    for (let i = 1; i <= ROUNDS; i += 1) {
      started = performance.now();
      const names = execFileSync('git', ['diff', '--name-only', at(i), at(i + 1), '--', 'envs/prod'], {
        cwd: bare,
        env: gitEnv,
        encoding: 'utf8',
      });
      native.push(performance.now() - started);
      if (names.trim().split('\n').length !== 1) throw new Error(`git diff said ${names}`);
    }
    const oursMs = median(ours);
    const nativeMs = median(native);
    return [
      {
        name: 'diff, 1 changed file of 10,000 (steady polling)',
        value: oursMs,
        unit: 'ms',
        notes: `median of ${ROUNDS} consecutive commits; per diff ${reads.trees} tree and ${reads.commits} commit lookups (${reads.fromMemory} from memory), ${reads.blobs} blobs read and parsed`,
      },
      {
        name: 'native git diff --name-only, same commits',
        value: nativeMs,
        unit: 'ms',
        notes: `median of ${ROUNDS}, process start included`,
      },
      { name: 'diff / native', value: oursMs / nativeMs, unit: '×', goal: '≤ 2×' },
      {
        name: 'diff, first call in a new process',
        value: coldMs,
        unit: 'ms',
        notes: `loads pack indexes; ${first.reads.trees} trees, ${first.reads.blobs} blobs read`,
      },
      { name: 'first fetch (depth 1), 10,000 manifests', value: initialFetchMs, unit: 'ms' },
      {
        name: 'incremental fetch, 1 changed file',
        value: median(fetches),
        unit: 'ms',
        notes: `median of ${fetches.length}`,
      },
    ];
  } finally {
    await server.stop();
    tmp.remove();
  }
}
