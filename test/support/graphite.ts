// A REAL Graphite for tests: Debian's carbon-cache (plaintext protocol in) and graphite-web's WSGI app (render API out), in a temporary folder.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../../src/demo/free-loopback-port.ts';

export interface TestGraphite {
  /** `http://127.0.0.1:PORT`, graphite-web: the address a metric's provider.graphite.address takes. */
  readonly address: string;
  /** Sends `path value timestamp` lines to carbon's plaintext port (timestamps in seconds; default now). */
  write(points: Array<{ path: string; value: number; at?: number }>): Promise<void>;
  /** Polls `render?target=…&from=-10min` until `accept(non-null values)` holds; returns them. */
  waitFor(target: string, accept: (values: number[]) => boolean, timeoutMs?: number): Promise<number[]>;
  stop(): Promise<void>;
}

// Debian's interpreter: graphite-web's Django and carbon's Twisted are its packages (a pyenv python3 lacks them).
const PYTHON = '/usr/bin/python3';

const SERVE_WSGI = `
import os, sys
sys.path.insert(0, sys.argv[1])
os.environ['DJANGO_SETTINGS_MODULE'] = 'graphite.settings'
os.environ['GRAPHITE_SETTINGS_MODULE'] = 'rollgate_test_settings'
from django.core.wsgi import get_wsgi_application
from wsgiref.simple_server import make_server, WSGIRequestHandler
class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass
server = make_server('127.0.0.1', int(sys.argv[2]), get_wsgi_application(), handler_class=Quiet)
print('listening', flush=True)
server.serve_forever()
`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function render(address: string, target: string): Promise<number[] | undefined> {
  try {
    const res = await fetch(`${address}/render?target=${encodeURIComponent(target)}&from=-10min&format=json`);
    if (!res.ok) return undefined;
    const body = (await res.json()) as Array<{ datapoints: Array<[number | null, number]> }>;
    return (body[0]?.datapoints ?? []).map(([v]) => v).filter((v): v is number => v !== null);
  } catch {
    return undefined;
  }
}

function started(child: ChildProcess, name: string, log: { text: string }): void {
  child.stdout?.on('data', (chunk: Buffer) => (log.text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log.text += chunk.toString()));
  child.on('error', (error) => (log.text += `${name}: ${error.message}\n`));
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killTimer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(killTimer);
}

/**
 * Starts carbon-cache (whisper files, 1 s resolution kept an hour) and graphite-web on free loopback
 * ports in a temporary folder, and returns once a point written to carbon is rendered by graphite-web.
 */
export async function startGraphite(): Promise<TestGraphite> {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-graphite-'));
  const whisper = join(dir, 'storage', 'whisper');
  for (const sub of [whisper, join(dir, 'log'), join(dir, 'lists')]) mkdirSync(sub, { recursive: true });
  const [line, pickle, cacheQuery, web] = [
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
  ];
  writeFileSync(
    join(dir, 'carbon.conf'),
    [
      '[cache]',
      `STORAGE_DIR = ${join(dir, 'storage')}/`,
      `LOCAL_DATA_DIR = ${whisper}/`,
      `WHITELISTS_DIR = ${join(dir, 'lists')}/`,
      `CONF_DIR = ${dir}/`,
      `LOG_DIR = ${join(dir, 'log')}/`,
      `PID_DIR = ${dir}/`,
      'ENABLE_LOGROTATION = False',
      'USER =',
      'MAX_CACHE_SIZE = inf',
      'MAX_UPDATES_PER_SECOND = inf',
      'MAX_CREATES_PER_MINUTE = inf',
      'LINE_RECEIVER_INTERFACE = 127.0.0.1',
      `LINE_RECEIVER_PORT = ${line}`,
      'ENABLE_UDP_LISTENER = False',
      'PICKLE_RECEIVER_INTERFACE = 127.0.0.1',
      `PICKLE_RECEIVER_PORT = ${pickle}`,
      'CACHE_QUERY_INTERFACE = 127.0.0.1',
      `CACHE_QUERY_PORT = ${cacheQuery}`,
      'LOG_LISTENER_CONNECTIONS = False',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'storage-schemas.conf'), '[default]\npattern = .*\nretentions = 1s:1h\n');
  writeFileSync(
    join(dir, 'rollgate_test_settings.py'),
    [
      "SECRET_KEY = 'rollgate-test-graphite'",
      `STORAGE_DIR = '${join(dir, 'storage')}/'`,
      `WHISPER_DIR = '${whisper}/'`,
      `STANDARD_DIRS = ['${whisper}/']`,
      `LOG_DIR = '${join(dir, 'log')}/'`,
      `INDEX_FILE = '${join(dir, 'storage', 'index')}'`,
      // Points still in carbon's cache are rendered too (asked over the cache query port).
      `CARBONLINK_HOSTS = ['127.0.0.1:${cacheQuery}']`,
      `DATABASES = {'default': {'NAME': '${join(dir, 'graphite.db')}', 'ENGINE': 'django.db.backends.sqlite3'}}`,
      "TAGDB = ''",
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'serve.py'), SERVE_WSGI);
  const log = { text: '' };
  const carbon = spawn('carbon-cache', [`--config=${join(dir, 'carbon.conf')}`, '--debug', 'start'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started(carbon, 'carbon-cache', log);
  const webApp = spawn(PYTHON, [join(dir, 'serve.py'), dir, String(web)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started(webApp, 'graphite-web', log);
  const address = `http://127.0.0.1:${web}`;

  const stop = async (): Promise<void> => {
    await Promise.all([stopChild(carbon), stopChild(webApp)]);
    rmSync(dir, { recursive: true, force: true });
  };

  const write = async (points: Array<{ path: string; value: number; at?: number }>): Promise<void> => {
    const now = Math.floor(Date.now() / 1000);
    const text = points.map((p) => `${p.path} ${p.value} ${p.at ?? now}\n`).join('');
    await new Promise<void>((resolve, reject) => {
      const socket = createConnection({ host: '127.0.0.1', port: line }, () => socket.end(text));
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
  };

  const waitFor = async (
    target: string,
    accept: (values: number[]) => boolean,
    timeoutMs = 20_000,
  ): Promise<number[]> => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      for (const [name, child] of [
        ['carbon-cache', carbon],
        ['graphite-web', webApp],
      ] as const)
        if (child.exitCode !== null)
          throw new Error(`${name} exited (${child.exitCode}): ${log.text.slice(-2000)}`);
      const values = await render(address, target);
      if (values !== undefined && accept(values)) return values;
      if (performance.now() > deadline)
        throw new Error(
          `graphite: ${target} did not reach the expected values in ${timeoutMs} ms: ${log.text.slice(-1000)}`,
        );
      await sleep(200);
    }
  };

  try {
    // carbon may not listen yet: write until the point shows.
    const deadline = performance.now() + 30_000;
    for (;;) {
      await write([{ path: 'rollgate.test.up', value: 1 }]).catch(() => undefined);
      if ((await render(address, 'rollgate.test.up'))?.includes(1)) break;
      if (carbon.exitCode !== null || webApp.exitCode !== null || performance.now() > deadline)
        throw new Error(log.text.slice(-2000) || 'not ready in 30 s');
      await sleep(300);
    }
  } catch (error) {
    await stop();
    throw new Error(
      `could not start carbon-cache and graphite-web (apt-get install graphite-carbon graphite-web): ${(error as Error).message}`,
      { cause: error },
    );
  }
  return { address, write, waitFor, stop };
}
