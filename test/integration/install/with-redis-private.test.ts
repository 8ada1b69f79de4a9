// deploy/overlays/with-redis: Redis asks for a password that is in no process's arguments, and only Rollgate's pods may reach it.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../../src/demo/free-loopback-port.ts';
import { startRedisProcess, type RedisProcess } from '../../support/redis-process.ts';
import { renderInstall, type RenderedObject } from './rendered-install.ts';

const run = promisify(execFile);

interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string }>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  initContainers?: Container[];
  containers: Container[];
  volumes?: Array<{ name: string; secret?: { secretName: string } }>;
}

let objects: RenderedObject[];
let tmp: string;

const find = (kind: string, name: string): RenderedObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind} ${name} not rendered`);
  return found;
};
const podOf = (deployment: RenderedObject): PodSpec =>
  (deployment as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;

/** Runs the overlay's init container script with its two folders moved under `root`. */
async function runConfigScript(root: string, password: string): Promise<{ code: number; conf?: string }> {
  const init = podOf(find('Deployment', 'rollgate-redis')).initContainers?.[0];
  const script = (init?.command?.[2] ?? '')
    .replaceAll('/var/run/secrets/redis', join(root, 'secret'))
    .replaceAll('/etc/redis', join(root, 'conf'));
  mkdirSync(join(root, 'secret'), { recursive: true });
  mkdirSync(join(root, 'conf'), { recursive: true });
  writeFileSync(join(root, 'secret', 'password'), password);
  try {
    await run('sh', ['-c', script]);
    return { code: 0, conf: readFileSync(join(root, 'conf', 'redis.conf'), 'utf8') };
  } catch (err) {
    return { code: Number((err as { code?: unknown }).code ?? 1) };
  }
}

beforeAll(async () => {
  objects = await renderInstall('with-redis');
  tmp = mkdtempSync(join(tmpdir(), 'rollgate-with-redis-'));
});

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('with-redis', () => {
  it('puts no password and no requirepass in any container’s command, arguments or environment values', () => {
    for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
      const pod = podOf(deployment);
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        const argv = [...(container.command ?? []), ...(container.args ?? [])];
        expect(argv.filter((a) => /^--requirepass|redis:\/\/[^@/]*:[^@/]*@/.test(a))).toEqual([]);
        for (const env of container.env ?? [])
          expect(env.value ?? '').not.toMatch(/redis:\/\/[^@/]*:[^@/]+@/);
      }
    }
  });

  it('gives Rollgate the password as a file from Secret rollgate-redis (redis.passwordFile)', () => {
    const pod = podOf(find('Deployment', 'rollgate'));
    const container = pod.containers[0]!;
    const file = container.env?.find((e) => e.name === 'ROLLGATE_REDIS_PASSWORD_FILE')?.value;
    const mount = container.volumeMounts?.find((m) => file?.startsWith(`${m.mountPath}/`));
    expect(mount).toBeDefined();
    expect(pod.volumes?.find((v) => v.name === mount?.name)?.secret?.secretName).toBe('rollgate-redis');
    const redisPod = podOf(find('Deployment', 'rollgate-redis'));
    expect(redisPod.volumes?.find((v) => v.secret)?.secret?.secretName).toBe('rollgate-redis');
  });

  it('lets only Rollgate’s pods reach Redis', () => {
    const policy = find('NetworkPolicy', 'rollgate-redis') as unknown as {
      spec: {
        podSelector: { matchLabels: Record<string, string> };
        policyTypes: string[];
        ingress: Array<{ from: Array<{ podSelector?: { matchLabels: Record<string, string> } }> }>;
      };
    };
    expect(policy.spec.podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'rollgate-redis' });
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    expect(policy.spec.ingress.flatMap((rule) => rule.from.map((f) => f.podSelector?.matchLabels))).toEqual([
      { 'app.kubernetes.io/name': 'rollgate' },
    ]);
  });

  describe('its Redis, started as the overlay starts it', () => {
    const password = 'q9Vd-2kL_x7.Tm4~pR8w';
    let server: RedisProcess | undefined;
    let port: number;

    afterAll(async () => server?.stop());

    it('refuses a client without the password; the password is in no process arguments', async () => {
      const { code, conf } = await runConfigScript(join(tmp, 'good'), password);
      expect(code).toBe(0);
      port = await freeLoopbackPort();
      server = await startRedisProcess(
        ['--port', String(port), '--bind', '127.0.0.1'],
        { port, password },
        conf,
      );
      // A client without the password, at the protocol level: PING is answered with NOAUTH.
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
        socket.once('data', (chunk) => {
          resolve(chunk.toString());
          socket.destroy();
        });
        socket.once('error', reject);
      });
      expect(answer).toMatch(/^-NOAUTH/);
      const client = new Redis({ port, password, lazyConnect: true, maxRetriesPerRequest: 0 });
      await client.connect();
      expect(await client.ping()).toBe('PONG');
      client.disconnect();
      const { stdout } = await run('ps', ['-eo', 'args']);
      expect(stdout).not.toContain(password);
    });

    it.each([
      ['a space (it would end the config line)', 'abcdefgh ijklmnop'],
      ['a quote', 'abcdefgh"ijklmnop'],
      ['fewer than 16 characters', 'short-1'],
    ])('refuses a password with %s, saying what to use', async (_, bad) => {
      expect((await runConfigScript(join(tmp, `bad-${bad.length}`), bad)).code).not.toBe(0);
    });
  });
});
