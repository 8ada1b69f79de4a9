// Rollgate's Redis configuration against real servers of the test's own: a redis-server with
// --requirepass, a Sentinel (redis-server --sentinel, itself password-protected) in front of it, and a
// TLS redis-server with openssl-made certificates. Each form must carry a reconcile job from a queue to
// a worker (BullMQ's duplicated connections included), and a client without the password must be refused.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.ts';
import { freeLoopbackPort } from '../../../src/demo/free-loopback-port.ts';
import { ReconcileQueue } from '../../../src/queue/reconcile-queue.ts';
import { createRedisConnection } from '../../../src/queue/redis-connection.ts';
import { redisOptions } from '../../../src/queue/redis-options.ts';
import { pingRedis } from '../../../src/queue/redis-ping.ts';
import { startWorker } from '../../../src/queue/start-worker.ts';
import { eventually } from '../../support/eventually.ts';
import { startRedisProcess, startSentinelProcess, type RedisProcess } from '../../support/redis-process.ts';

const PASSWORD = 'p@ss word/1';
const SENTINEL_PASSWORD = 'sentinel-secret';
const MASTER = 'rollgate-master';

let dir: string;
let ports: { auth: number; sentinel: number; tls: number };
const servers: RedisProcess[] = [];
let tlsSupported = false;
let tlsStartError = '';

/** A CA and a server certificate for 127.0.0.1 signed by it, made with openssl. */
function makeCertificates(into: string): void {
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: into, stdio: 'ignore' });
  };
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=rollgate-test-ca',
  );
  run(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  writeFileSync(join(into, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '1',
    '-extfile',
    'san.ext',
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-redis-forms-'));
  ports = {
    auth: await freeLoopbackPort(),
    sentinel: await freeLoopbackPort(),
    tls: await freeLoopbackPort(),
  };
  const base = ['--bind', '127.0.0.1', '--appendonly', 'no'];
  servers.push(
    await startRedisProcess([...base, '--port', String(ports.auth), '--requirepass', PASSWORD], {
      host: '127.0.0.1',
      port: ports.auth,
      password: PASSWORD,
    }),
  );
  servers.push(
    await startSentinelProcess({
      port: ports.sentinel,
      password: SENTINEL_PASSWORD,
      name: MASTER,
      masterPort: ports.auth,
      masterPassword: PASSWORD,
    }),
  );
  // Debian's redis-server is built with TLS; should one not be, the TLS test says so and fails.
  makeCertificates(dir);
  // A port picked free can be taken by another process before redis-server binds it (the suite runs
  // beside other work): one retry on a fresh port, and the last error kept for the assertion.
  for (let attempt = 1; attempt <= 2 && !tlsSupported; attempt++) {
    if (attempt > 1) ports.tls = await freeLoopbackPort();
    try {
      servers.push(
        await startRedisProcess(
          [
            ...base,
            '--port',
            '0',
            '--tls-port',
            String(ports.tls),
            '--tls-cert-file',
            join(dir, 'server.pem'),
            '--tls-key-file',
            join(dir, 'server.key'),
            '--tls-ca-cert-file',
            join(dir, 'ca.pem'),
            '--tls-auth-clients',
            'no',
            '--requirepass',
            PASSWORD,
          ],
          {
            host: '127.0.0.1',
            port: ports.tls,
            password: PASSWORD,
            tls: { ca: readFileSync(join(dir, 'ca.pem')) },
          },
        ),
      );
      tlsSupported = true;
    } catch (err) {
      tlsStartError = (err as Error).message;
    }
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Opens Rollgate's connection for the settings, then runs one reconcile job through a worker on it. */
async function carriesAJob(overrides: Record<string, string>, env: Record<string, string>): Promise<Redis> {
  const config = loadConfig({ env: {}, overrides: { 'redis.prefix': 'forms', ...overrides } });
  const connection = createRedisConnection(redisOptions(config.redis, { env }));
  connection.on('error', () => undefined);
  await pingRedis(connection, 5_000);
  const queue = new ReconcileQueue({ connection, prefix: config.redis.prefix });
  const seen: string[] = [];
  const worker = startWorker(
    'reconcile',
    async (payload) => {
      seen.push(`${payload.namespace}/${payload.name}`);
      return { kind: 'done' };
    },
    { connection, prefix: config.redis.prefix },
  );
  try {
    const key = `forms/${Object.values(overrides).length}-${Date.now()}`;
    await queue.enqueue(key);
    await eventually('the job to reach the worker', () => seen.includes(key), { timeoutMs: 10_000 });
  } finally {
    await worker.stop();
    await queue.close();
  }
  return connection;
}

describe('Redis with AUTH, through a Sentinel, over TLS', () => {
  it('a redis-server with --requirepass refuses a client without the password', async () => {
    const config = loadConfig({ env: {}, overrides: { 'redis.url': `redis://127.0.0.1:${ports.auth}` } });
    const connection = createRedisConnection(redisOptions(config.redis, { env: {} }), {
      retryStrategy: () => null,
    });
    connection.on('error', () => undefined);
    try {
      await expect(connection.ping()).rejects.toThrow(/NOAUTH|Authentication required/);
    } finally {
      connection.disconnect();
    }
  });

  it('connects with the password in the URL (percent-encoded)', async () => {
    const url = `redis://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${ports.auth}`;
    const connection = await carriesAJob({ 'redis.url': url }, {});
    expect(connection.options.password).toBe(PASSWORD);
    connection.disconnect();
  });

  it('connects with the password from redis.passwordEnv and from redis.passwordFile', async () => {
    const viaEnv = await carriesAJob(
      { 'redis.url': `redis://127.0.0.1:${ports.auth}`, 'redis.passwordEnv': 'ROLLGATE_TEST_REDIS_PASSWORD' },
      { ROLLGATE_TEST_REDIS_PASSWORD: PASSWORD },
    );
    viaEnv.disconnect();
    const file = join(dir, 'redis-password');
    writeFileSync(file, `${PASSWORD}\n`);
    const viaFile = await carriesAJob(
      { 'redis.url': `redis://127.0.0.1:${ports.auth}`, 'redis.passwordFile': file },
      {},
    );
    viaFile.disconnect();
  });

  it('connects through the Sentinel to the master it names (URL form and key form)', async () => {
    const viaUrl = await carriesAJob(
      {
        'redis.url': `redis+sentinel://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${ports.sentinel}/${MASTER}`,
        'redis.sentinelPasswordEnv': 'SENTINEL_PW',
      },
      { SENTINEL_PW: SENTINEL_PASSWORD },
    );
    // The connection went to the master the Sentinel named: the password-protected server's port.
    const info = await viaUrl.info('server');
    expect(info).toMatch(new RegExp(`tcp_port:${ports.auth}\\b`));
    viaUrl.disconnect();
    const viaKeys = await carriesAJob(
      {
        'redis.sentinels': JSON.stringify([`127.0.0.1:${ports.sentinel}`]),
        'redis.name': MASTER,
        'redis.passwordEnv': 'REDIS_PW',
        'redis.sentinelPasswordEnv': 'SENTINEL_PW',
      },
      { REDIS_PW: PASSWORD, SENTINEL_PW: SENTINEL_PASSWORD },
    );
    viaKeys.disconnect();
  });

  it('connects over TLS, checking the server against redis.tlsCaFile', async () => {
    expect(tlsSupported, `redis-server could not start with --tls-port: ${tlsStartError}`).toBe(true);
    const connection = await carriesAJob(
      {
        'redis.url': `rediss://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${ports.tls}`,
        'redis.tlsCaFile': join(dir, 'ca.pem'),
      },
      {},
    );
    connection.disconnect();
  });

  it('refuses a TLS server whose certificate its CA did not sign', async () => {
    expect(tlsSupported, `redis-server could not start with --tls-port: ${tlsStartError}`).toBe(true);
    const config = loadConfig({
      env: {},
      overrides: {
        'redis.url': `rediss://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${ports.tls}`,
        // The server's own certificate is no CA: verification must fail.
        'redis.tlsCaFile': join(dir, 'server.pem'),
      },
    });
    const errors: string[] = [];
    const connection = createRedisConnection(redisOptions(config.redis, { env: {} }), {
      retryStrategy: () => null,
    });
    connection.on('error', (err: Error) => errors.push(err.message));
    try {
      await expect(connection.ping()).rejects.toThrow();
      expect(errors.join('\n')).toMatch(/certificate|self.signed|unable to verify/i);
    } finally {
      connection.disconnect();
    }
  });
});
