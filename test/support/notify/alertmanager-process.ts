// Starts a real Alertmanager (Debian package `prometheus-alertmanager`) for the alertmanager notification service's tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../../../src/demo/free-loopback-port.ts';
import { eventually } from '../eventually.ts';

/** An alert as Alertmanager's API v2 lists it (GettableAlert, the fields tests read). */
export interface GettableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
  status: { state: string };
}

export interface TestAlertmanager {
  /** `127.0.0.1:PORT`, a `targets` entry. */
  target: string;
  /** GET /api/v2/alerts: the alerts Alertmanager holds as active (resolved ones are not listed). */
  alerts(): Promise<GettableAlert[]>;
  stop(): Promise<void>;
}

/**
 * Runs Alertmanager with one receiver that sends nowhere, no clustering, storage in a temporary
 * directory, and returns once `/-/ready` answers.
 */
export async function startAlertmanager(binary = 'prometheus-alertmanager'): Promise<TestAlertmanager> {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-alertmanager-'));
  writeFileSync(
    join(dir, 'alertmanager.yml'),
    ['route:', '  receiver: nowhere', 'receivers:', '  - name: nowhere', ''].join('\n'),
  );
  const port = await freeLoopbackPort();
  const target = `127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=${target}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const spawnError = new Promise<never>((_, reject) => child.on('error', (error) => reject(error)));
  spawnError.catch(() => undefined);

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killTimer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await Promise.race([
      spawnError,
      eventually(
        'alertmanager ready',
        async () => {
          if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}): ${output.slice(-2000)}`);
          return (await fetch(`http://${target}/-/ready`)).ok;
        },
        { timeoutMs: 20_000 },
      ),
    ]);
  } catch (error) {
    await stop();
    throw new Error(
      `could not start alertmanager (${binary}; apt-get install prometheus-alertmanager): ${(error as Error).message}`,
      { cause: error },
    );
  }
  return {
    target,
    alerts: async () => (await (await fetch(`http://${target}/api/v2/alerts`)).json()) as GettableAlert[],
    stop,
  };
}
