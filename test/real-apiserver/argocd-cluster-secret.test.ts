// The real kube-apiserver registered as a cluster by an Argo CD cluster Secret (bearer token + its TLS CA) kept in a
// sandbox: the cluster set probes it Ready over verified TLS, and `rollgate list rollouts --cluster` reads its Rollouts.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.ts';
import type { RunningClusterSet } from '../../src/clusters/cluster-registry.ts';
import { openClusterSet } from '../../src/clusters/open-cluster-set.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import { installCrds } from '../../src/kube/install-crds.ts';
import { silentLogger } from '../../src/log/logger.ts';
import { rollgateCrds } from '../../src/manifest/crds.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';
import { runCli } from '../support/run-cli.ts';
import { connectRealCluster, createTestNamespace } from './support/real-cluster.ts';

const cluster = connectRealCluster();
const STATE_NAMESPACE = 'rollgate-system';
let local: Sandbox;
let localKubeconfig: string;
let namespace: { name: string; remove(): Promise<void> };
let set: RunningClusterSet | undefined;

beforeAll(async () => {
  namespace = await createTestNamespace(cluster, 'argocd-secret');
  await installCrds(cluster.clients, rollgateCrds());
  await cluster.clients.custom.createNamespacedCustomObject({
    group: 'rollgate.dev',
    version: 'v1alpha1',
    namespace: namespace.name,
    plural: 'rollouts',
    body: {
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'payments' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'payments' } },
        template: {
          metadata: { labels: { app: 'payments' } },
          spec: { containers: [{ name: 'app', image: 'shop/payments:1' }] },
        },
        strategy: { canary: { steps: [{ setWeight: 20 }, { pause: {} }] } },
      },
    },
  });
  // The Secret, as an Argo CD user writes it: the server, a bearer token and the CA that signed the server's certificate.
  const current = cluster.kubeConfig.getCurrentCluster();
  const token = cluster.kubeConfig.getCurrentUser()?.token;
  expect(current?.server).toMatch(/^https:\/\//);
  expect(token).toBeTruthy();
  const caData = current?.caData ?? readFileSync(current?.caFile ?? '').toString('base64');
  local = await startSandbox();
  const localClients = createKubeClients(local.kubeConfig);
  await localClients.core.createNamespace({ body: { metadata: { name: STATE_NAMESPACE } } });
  const data = {
    name: 'real',
    server: current?.server ?? '',
    config: JSON.stringify({ bearerToken: token, tlsClientConfig: { insecure: false, caData } }),
  };
  await localClients.core.createNamespacedSecret({
    namespace: STATE_NAMESPACE,
    body: {
      metadata: { name: 'cluster-real', labels: { 'argocd.argoproj.io/secret-type': 'cluster' } },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    },
  });
  localKubeconfig = join(mkdtempSync(join(tmpdir(), 'rollgate-real-cluster-')), 'kubeconfig');
  await local.writeKubeconfig(localKubeconfig);
});

afterAll(async () => {
  await set?.close();
  await local?.stop();
  await namespace?.remove();
});

describe('the real API server registered by an Argo CD cluster Secret', () => {
  it('is probed Ready over verified TLS with its bearer token', async () => {
    set = await openClusterSet(
      loadConfig({ env: { ROLLGATE_CLUSTER_SECRETS_ENABLED: 'true' } }),
      {
        clients: createKubeClients(local.kubeConfig),
        namespace: 'default',
        source: 'flag',
        origin: local.url,
      },
      {
        clock: systemClock,
        logger: silentLogger,
        probeSchedule: { readyIntervalMs: 500, failing: { baseMs: 200, capMs: 1_000, jitter: 0 } },
      },
    );
    await eventually('the real cluster Ready', () => set?.state('real')?.phase === 'Ready');
    expect(set.get('real')?.server).toBe(cluster.kubeConfig.getCurrentCluster()?.server);
  });

  it('lists its Rollouts through `rollgate list rollouts --cluster real`', async () => {
    const listed = await runCli(
      'list',
      'rollouts',
      '--cluster',
      'real',
      '-n',
      namespace.name,
      '--kubeconfig',
      localKubeconfig,
    );
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^NAME\s+STRATEGY/);
    expect(listed.stdout).toMatch(/\npayments\s+Canary/);
  });
});
