// Starts a real Prometheus (Debian package `prometheus`) for tests, scraping a local exporter whose values the test sets.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../../src/demo/free-loopback-port.ts';

/** A /metrics endpoint serving gauges the test controls. */
export interface TestExporter {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Sets a gauge sample (`labels` identify the series). */
  set(name: string, value: number, labels?: Record<string, string>): void;
  /** Removes every series of a gauge. */
  remove(name: string): void;
  close(): Promise<void>;
}

export interface TestPrometheus {
  /** `http://127.0.0.1:PORT`, the address a metric's provider.prometheus.address takes. */
  readonly address: string;
  readonly exporter: TestExporter;
  /** Polls an instant query until `accept(values)` holds (values of the result vector); returns them. */
  waitFor(query: string, accept: (values: number[]) => boolean, timeoutMs?: number): Promise<number[]>;
  stop(): Promise<void>;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** Starts the exporter on 127.0.0.1, a free port. */
async function startTestExporter(): Promise<TestExporter> {
  const series = new Map<string, Map<string, number>>();
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    const lines: string[] = [];
    for (const [name, samples] of series) {
      lines.push(`# TYPE ${name} gauge`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${formatValue(value)}`);
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(`${lines.join('\n')}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    set(name, value, labels = {}) {
      const key =
        Object.keys(labels).length === 0
          ? ''
          : `{${Object.entries(labels)
              .map(([k, v]) => `${k}="${v}"`)
              .join(',')}}`;
      let samples = series.get(name);
      if (samples === undefined) series.set(name, (samples = new Map()));
      samples.set(key, value);
    },
    remove(name) {
      series.delete(name);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function instantQuery(address: string, query: string): Promise<number[] | undefined> {
  try {
    const res = await fetch(`${address}/api/v1/query?query=${encodeURIComponent(query)}`);
    if (!res.ok) return undefined;
    const body = (await res.json()) as {
      data?: { resultType?: string; result?: Array<{ value: [number, string] }> };
    };
    if (body.data?.resultType !== 'vector') return undefined;
    return (body.data.result ?? []).map((s) => Number(s.value[1]));
  } catch {
    return undefined;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `prometheus` on a free port with a temporary config (scrape_interval 1s) scraping a fresh
 * exporter, and returns once the exporter's first sample (`rollgate_test_up 1`) is queryable.
 * Stop it with `stop()`, which also removes its data directory.
 */
export async function startPrometheus(
  binary = process.env['ROLLGATE_PROMETHEUS_BIN'] ?? 'prometheus',
): Promise<TestPrometheus> {
  const exporter = await startTestExporter();
  exporter.set('rollgate_test_up', 1);
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-prometheus-'));
  const target = exporter.url.replace('http://', '');
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: rollgate-test',
      '    scrape_interval: 1s',
      '    scrape_timeout: 900ms',
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  );
  // Prometheus cannot listen on port 0 and report the port it got.
  const port = await freeLoopbackPort();
  const address = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
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
    await exporter.close();
    rmSync(dir, { recursive: true, force: true });
  };

  const waitFor = async (
    query: string,
    accept: (values: number[]) => boolean,
    timeoutMs = 20_000,
  ): Promise<number[]> => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`prometheus exited (${child.exitCode}): ${output.slice(-2000)}`);
      const values = await instantQuery(address, query);
      if (values !== undefined && accept(values)) return values;
      if (performance.now() > deadline)
        throw new Error(`prometheus: ${query} did not reach the expected value in ${timeoutMs} ms`);
      await sleep(200);
    }
  };

  try {
    await Promise.race([spawnError, waitFor('rollgate_test_up', (v) => v[0] === 1, 30_000)]);
  } catch (error) {
    await stop();
    throw new Error(
      `could not start prometheus (${binary}; apt-get install prometheus): ${(error as Error).message}`,
      { cause: error },
    );
  }
  return { address, exporter, waitFor, stop };
}
