// The Deployments as shipped, run as real processes: each container's args with the shipped configuration
// start Rollgate against the sandbox, its probe paths answer 200 once Ready, and SIGTERM stops it within
// the pod's terminationGracePeriodSeconds.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';
import { freePort } from '../../support/global-setup.ts';
import { openRedisTestScope } from '../../support/redis-test-prefix.ts';
import { renderInstall, type InstallName, type RenderedObject } from './rendered-install.ts';

interface ShippedPod {
  terminationGracePeriodSeconds: number;
  containers: {
    args: string[];
    livenessProbe: { httpGet: { path: string } };
    readinessProbe: { httpGet: { path: string } };
    volumeMounts: { name: string; mountPath: string }[];
  }[];
  volumes: { name: string; configMap?: { name: string } }[];
}

const root = join(import.meta.dirname, '..', '..', '..');
let sandbox: Sandbox;
let dir: string;
let kubeconfig: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-install-run-'));
  kubeconfig = join(dir, 'sandbox.kubeconfig');
  sandbox = await startSandbox({ readyDelayMs: 50 });
  await sandbox.writeKubeconfig(kubeconfig);
});

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const podOf = (deployment: RenderedObject): ShippedPod =>
  (deployment as unknown as { spec: { template: { spec: ShippedPod } } }).spec.template.spec;

/**
 * Starts one container's command as the pod would: its args, with the ConfigMap's file where the pod mounts
 * it. Only what a pod has that a test machine lacks is changed: the cluster (the sandbox's kubeconfig
 * instead of the ServiceAccount), Redis (the test's, as ROLLGATE_REDIS_URL from rollgate-secrets would),
 * the port and the Git cache directory.
 */
async function startShipped(objects: RenderedObject[], deployment: RenderedObject, prefix: string) {
  const pod = podOf(deployment);
  const container = pod.containers[0]!;
  const configMount = container.volumeMounts.find(
    (m) => pod.volumes.find((v) => v.name === m.name)?.configMap,
  );
  const configMap = objects.find(
    (o) => o.kind === 'ConfigMap' && o.metadata.name === 'rollgate-config',
  ) as unknown as {
    data: Record<string, string>;
  };
  const configFile = join(dir, `${deployment.metadata.name}-${prefix}.yaml`);
  writeFileSync(configFile, configMap.data['rollgate.yaml']!);
  const args = container.args.map((arg) =>
    arg === `${configMount!.mountPath}/rollgate.yaml` ? configFile : arg,
  );
  expect(args).toContain(configFile);
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'rollgate.js'), ...args, '--kubeconfig', kubeconfig],
    {
      env: {
        ...process.env,
        ROLLGATE_CONFIG: '',
        ROLLGATE_REDIS_URL: inject('redisUrl'),
        ROLLGATE_REDIS_PREFIX: prefix,
        ROLLGATE_SERVER_HOST: '127.0.0.1',
        ROLLGATE_SERVER_PORT: String(port),
        ROLLGATE_GIT_CACHE_DIR: join(dir, 'git', deployment.metadata.name),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, pod, url: `http://127.0.0.1:${port}`, stderr: () => stderr };
}

describe.each(['base', 'split'] as InstallName[])('%s: the shipped Deployments run', (install) => {
  it('become Ready on their probe paths and stop within the grace period', async () => {
    const objects = await renderInstall(install);
    const deployments = objects.filter(
      (o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/name'] === 'rollgate',
    );
    const redis = await openRedisTestScope(inject('redisUrl'));
    onTestFinished(() => redis.cleanup());
    const running = await Promise.all(deployments.map((d) => startShipped(objects, d, redis.prefix)));
    for (const { pod, url, child, stderr } of running) {
      const container = pod.containers[0]!;
      await eventually(
        `${container.args[0]} ready at ${container.readinessProbe.httpGet.path}`,
        async () => {
          if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${stderr()}`);
          return (await fetch(`${url}${container.readinessProbe.httpGet.path}`)).status === 200;
        },
        { timeoutMs: 25_000 },
      );
      expect((await fetch(`${url}${container.livenessProbe.httpGet.path}`)).status).toBe(200);
    }
    for (const { child, pod } of running) {
      const started = Date.now();
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(Date.now() - started).toBeLessThan(pod.terminationGracePeriodSeconds * 1000);
    }
  }, 60_000);
});
