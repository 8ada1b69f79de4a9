// Benchmark: an unchanged poll (the change check alone): HTTP requests made and CPU time spent per poll.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { GitSource } from '../src/git/source.ts';
import {
  configMapYaml,
  createBareRepository,
  makeTempDir,
  WorkingCopy,
} from '../test/support/git-fixtures.ts';

const POLLS = 200;

/** Runs the smart-HTTP server in a child process so the CPU measured here is the poller's alone. */
async function startServerProcess(root: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const serverModule = pathToFileURL(
    fileURLToPath(new URL('../src/git/smart-http-server.ts', import.meta.url)),
  ).href;
  const code = [
    `const { serveGitRepositories } = await import(${JSON.stringify(serverModule)});`,
    `const server = await serveGitRepositories({ root: ${JSON.stringify(root)} });`,
    'console.log(server.url);',
    "process.on('SIGTERM', () => server.stop().then(() => process.exit(0)));",
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const [line] = (await once(lines, 'line')) as [string];
  return {
    url: line.trim(),
    stop: async () => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs the benchmark; see docs/sources.md for what the numbers mean. */
export async function run(): Promise<
  Array<{ name: string; value: number; unit: string; goal?: string; notes?: string }>
> {
  const tmp = makeTempDir('rollgate-bench-poll-');
  const root = join(tmp.path, 'repos');
  const bare = createBareRepository(root, 'apps');
  const wc = new WorkingCopy(join(tmp.path, 'work'));
  for (let i = 0; i < 50; i += 1)
    wc.write({ [`envs/prod/app-${i}.yaml`]: configMapYaml(`app-${i}`, { v: '1' }) });
  wc.commit();
  await wc.push(bare);
  const server = await startServerProcess(root);
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
