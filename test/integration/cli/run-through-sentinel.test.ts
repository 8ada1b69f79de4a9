// `rollgate reconciler` (the real CLI) reaching a password-protected Redis through a password-protected
// Sentinel: it starts, drives a Rollout to Healthy with its queues on the master the Sentinel names, and
// never prints either password; with a wrong password it stops at start saying what to fix, again
// without printing it.
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freeLoopbackPort } from '../../../src/demo/free-loopback-port.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { ROLLGATE_API_GROUP } from '../../../src/manifest/api-version.ts';
import { eventually } from '../../support/eventually.ts';
import { makeTempDir, type TempDir } from '../../support/git-fixtures.ts';
import { startRedisProcess, startSentinelProcess, type RedisProcess } from '../../support/redis-process.ts';
import { installCli, startRollgate, type RollgateProcess } from '../../support/rollgate-processes.ts';
import { testRollout } from '../reconcile/reconcile-harness.ts';

const PASSWORD = 'master-Pa55word';
const SENTINEL_PASSWORD = 'sentinel-Pa55word';
const MASTER = 'rollgate';

let tmp: TempDir;
/** The run's installed CLI (a bundle of the current source), as the other process tests start it. */
let cliRoot: string;
let sandbox: Sandbox;
let kubeconfig: string;
let ports: { redis: number; sentinel: number };
const servers: RedisProcess[] = [];
const processes: RollgateProcess[] = [];

beforeAll(async () => {
  tmp = makeTempDir('rollgate-sentinel-cli-');
  cliRoot = await installCli(inject('runDir'));
  ports = { redis: await freeLoopbackPort(), sentinel: await freeLoopbackPort() };
  servers.push(
    await startRedisProcess(
      ['--port', String(ports.redis), '--bind', '127.0.0.1', '--appendonly', 'no', '--requirepass', PASSWORD],
      { host: '127.0.0.1', port: ports.redis, password: PASSWORD },
    ),
  );
  servers.push(
    await startSentinelProcess({
      port: ports.sentinel,
      password: SENTINEL_PASSWORD,
      name: MASTER,
      masterPort: ports.redis,
      masterPassword: PASSWORD,
    }),
  );
  sandbox = await startSandbox({ readyDelayMs: 100 });
  kubeconfig = join(tmp.path, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await Promise.all(servers.map((s) => s.stop()));
  await sandbox?.stop();
  tmp?.remove();
});

function reconciler(label: string, password: string): RollgateProcess {
  const started = startRollgate(
    cliRoot,
    label,
    'reconciler',
    [
      '--kubeconfig',
      kubeconfig,
      '--redis',
      `redis+sentinel://127.0.0.1:${ports.sentinel}/${MASTER}`,
      '--port',
      '0',
      '--set',
      'server.host=127.0.0.1',
      '--set',
      'redis.passwordEnv=RG_TEST_REDIS_PASSWORD',
      '--set',
      'redis.sentinelPasswordEnv=RG_TEST_SENTINEL_PASSWORD',
      '--set',
      'log.format=json',
      '--set',
      'log.level=debug',
    ],
    { RG_TEST_REDIS_PASSWORD: password, RG_TEST_SENTINEL_PASSWORD: SENTINEL_PASSWORD },
  );
  processes.push(started);
  return started;
}

describe('rollgate reconciler through a Sentinel, with AUTH', () => {
  it('starts, reconciles a Rollout with its queues on the master, and prints no password', async () => {
    const running = reconciler('reconciler', PASSWORD);
    await running.started();
    const custom = sandbox.kubeConfig.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      body: testRollout({
        name: 'via-sentinel',
        replicas: 1,
        image: 'app:1',
        steps: [{ setWeight: 50 }, { pause: {} }],
      }),
    });
    await eventually(
      'the Rollout to be Healthy',
      async () => {
        const r = (await custom.getNamespacedCustomObject({
          group: ROLLGATE_API_GROUP,
          version: 'v1alpha1',
          namespace: 'default',
          plural: 'rollouts',
          name: 'via-sentinel',
        })) as { status?: { phase?: string } };
        return r.status?.phase === 'Healthy';
      },
      { timeoutMs: 20_000 },
    );
    // The reconcile queue lives on the master the Sentinel named.
    const master = new Redis({ host: '127.0.0.1', port: ports.redis, password: PASSWORD });
    try {
      expect(await master.keys('{rollgate}:reconcile:*')).not.toEqual([]);
    } finally {
      master.disconnect();
    }
    await running.stop();
    expect(running.output()).toContain('"msg":"stopped"');
    expect(running.output()).not.toContain(PASSWORD);
    expect(running.output()).not.toContain(SENTINEL_PASSWORD);
  }, 60_000);

  it('with a wrong password: stops at start, says what to fix, prints neither password', async () => {
    const wrong = 'not-the-Pa55word';
    const refused = reconciler('refused', wrong);
    const code = await new Promise<number | null>((resolve) => refused.child.once('exit', resolve));
    expect(code).toBe(1);
    expect(refused.output()).toMatch(
      /Redis refuses our credentials .*redis\.passwordFile or redis\.passwordEnv/,
    );
    for (const secret of [wrong, PASSWORD, SENTINEL_PASSWORD]) expect(refused.output()).not.toContain(secret);
  }, 60_000);
});
