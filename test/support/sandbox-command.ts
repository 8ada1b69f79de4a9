// `rollgate sandbox` started from the CLI as a child process, with the real kubectl pointed at it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SandboxCommand {
  child: ChildProcess;
  /** A temporary directory holding the kubeconfig and kubectl's cache, for the test's files too. */
  dir: string;
  kubeconfig: string;
  /** The `sandbox ready: …` line the command printed. */
  readyLine: string;
  /** The API server's URL, as the ready line names it. */
  server: string;
  /** The kubectl flags that reach this sandbox (for a kubectl the test spawns itself). */
  kubectlFlags: string[];
  /** Runs kubectl against the sandbox; resolves with its stdout, rejects when it fails. */
  kubectl(...args: string[]): Promise<string>;
  /** Stops the command (SIGTERM) unless it already exited, and removes `dir`. */
  stop(): Promise<void>;
}

/** Runs `rollgate sandbox --port 0 --kubeconfig DIR/sandbox.kubeconfig ...flags` and waits for its ready line. */
export async function startSandboxCommand(flags: string[], tempPrefix: string): Promise<SandboxCommand> {
  const dir = mkdtempSync(join(tmpdir(), tempPrefix));
  const kubeconfig = join(dir, 'sandbox.kubeconfig');
  const child = spawn(
    process.execPath,
    ['bin/rollgate.js', 'sandbox', '--port', '0', '--kubeconfig', kubeconfig, ...flags],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const readyLine = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('sandbox ready:'));
      if (line) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`rollgate sandbox exited early with ${code}`)));
  });
  const kubectlFlags = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache')];
  return {
    child,
    dir,
    kubeconfig,
    readyLine,
    server: /server (\S+)$/.exec(readyLine)?.[1] ?? '',
    kubectlFlags,
    kubectl: async (...args) =>
      (await run('kubectl', [...kubectlFlags, ...args], { timeout: 30_000 })).stdout,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
