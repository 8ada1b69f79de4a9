// Benchmark: an unchanged poll (the change check alone): HTTP requests made and CPU time spent per poll.
import { join } from 'node:path';
import { GitSource } from '../src/git/source.ts';
import { serveGitRepositoriesInChild } from './git-server-process.ts';
import type { BenchResult } from './run.ts';
import {
  configMapYaml,
  createBareRepository,
  makeTempDir,
  WorkingCopy,
} from '../test/support/git-fixtures.ts';

const POLLS = 200;

/** Runs the benchmark; see docs/sources.md for what the numbers mean. */
export async function run(): Promise<BenchResult[]> {
  const tmp = makeTempDir('rollgate-bench-poll-');
  const root = join(tmp.path, 'repos');
  const bare = createBareRepository(root, 'apps');
  const wc = new WorkingCopy(join(tmp.path, 'work'));
  for (let i = 0; i < 50; i += 1)
    wc.write({ [`envs/prod/app-${i}.yaml`]: configMapYaml(`app-${i}`, { v: '1' }) });
  wc.commit();
  await wc.push(bare);
  const server = await serveGitRepositoriesInChild(root);
  try {
    const source = new GitSource(
      { name: 'apps', url: `${server.url}/apps.git`, branch: 'main', path: 'envs/prod' },
      { cacheDir: join(tmp.path, 'cache') },
    );
    const before = source.requestCount;
    const synced = await source.fetch();
    await source.remoteHead();
    const firstCheckRequests = source.requestCount - before;

    const requestsBefore = source.requestCount;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < POLLS; i += 1) {
      if ((await source.remoteHead()) !== synced) throw new Error('the remote moved during the benchmark');
    }
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const requests = (source.requestCount - requestsBefore) / POLLS;
    return [
      { name: 'HTTP requests per unchanged poll', value: requests, unit: 'requests', goal: '1' },
      {
        name: 'poller CPU per unchanged poll',
        value: (cpu.user + cpu.system) / 1000 / POLLS,
        unit: 'ms',
        notes: `user + system over ${POLLS} polls; server in another process`,
      },
      {
        name: 'wall time per unchanged poll',
        value: wallMs / POLLS,
        unit: 'ms',
        notes: 'local server, git http-backend per request',
      },
      {
        name: 'requests for the first fetch and check of a source',
        value: firstCheckRequests,
        unit: 'requests',
        notes: 'fetch (2) + first ref check (capability advert + ls-refs)',
      },
    ];
  } finally {
    await server.stop();
    tmp.remove();
  }
}
