// A smart-HTTP Git server in a child process, so its git http-backend spawns (one per request, each
// blocking the spawning event loop for milliseconds) do not slow the process being measured.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { GitServer } from '../src/git/smart-http-server.ts';

/**
 * Serves every repository under `root` like serveGitRepositories, from a child process. The request
 * count arrives over the child's stdout (one line per request), so it can lag by a request or two.
 * `setDown` is not available.
 */
export async function serveGitRepositoriesInChild(
  root: string,
  options: { receivePack?: boolean } = {},
): Promise<GitServer> {
  const serverModule = pathToFileURL(
    fileURLToPath(new URL('../src/git/smart-http-server.ts', import.meta.url)),
  ).href;
  const code = [
    `const { serveGitRepositories } = await import(${JSON.stringify(serverModule)});`,
    `const server = await serveGitRepositories({ root: ${JSON.stringify(root)}, receivePack: ${options.receivePack === true}, onRequest: () => console.log('request') });`,
    'console.log(server.url);',
    "process.on('SIGTERM', () => server.stop().then(() => process.exit(0)));",
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const [url] = (await once(lines, 'line')) as [string];
  let requests = 0;
  lines.on('line', (line) => {
    if (line === 'request') requests += 1;
  });
  return {
    url: url.trim(),
    requestCount: () => requests,
    resetRequestCount: () => {
      requests = 0;
    },
    setDown: () => {
      throw new Error('setDown is not available on a Git server in a child process');
    },
    stop: async () => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
