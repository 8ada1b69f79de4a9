// Clusters registered by Argo-CD-format Secrets in a local sandbox, against two more sandboxes: picked up, re-registered
// and dropped while running; an expired token Unauthorized; an unknown CA Invalid; bad Secrets refused with an Event;
// and `rollgate list --cluster` / `--all-clusters` reading them.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Event, V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../../src/clock/clock.ts';
import type { ClusterEvent } from '../../../src/clusters/cluster-set.ts';
import type { RunningClusterSet } from '../../../src/clusters/cluster-registry.ts';
import { openClusterSet } from '../../../src/clusters/open-cluster-set.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { createKubeClients, type KubeConnection } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';
import { runCli } from '../../support/run-cli.ts';
import {
  selfSignedCertificate,
  startTlsTestServer,
  type TlsTestServer,
} from '../../support/tls-test-server.ts';

const NS = 'rollgate-system';
const A_TOKEN = 'admin-token-of-a';
let local: Sandbox;
let a: Sandbox;
let b: Sandbox;
let bClock: ManualClock;
let tls: TlsTestServer;
let kubeconfig: string;
let set: RunningClusterSet;
const heard: string[] = [];

function connection(sandbox: Sandbox): KubeConnection {
  return {
    clients: createKubeClients(sandbox.kubeConfig),
    namespace: 'default',
    source: 'flag',
    origin: sandbox.url,
  };
}

function clusterSecret(secretName: string, data: Record<string, string>): V1Secret {
  return {
    metadata: { name: secretName, namespace: NS, labels: { 'argocd.argoproj.io/secret-type': 'cluster' } },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

async function putSecret(secret: V1Secret): Promise<void> {
  const core = createKubeClients(local.kubeConfig).core;
  const name = secret.metadata?.name ?? '';
  try {
    await core.replaceNamespacedSecret({ namespace: NS, name, body: secret });
  } catch {
    await core.createNamespacedSecret({ namespace: NS, body: secret });
  }
}

async function eventsOn(secretName: string): Promise<CoreV1Event[]> {
  const list = await createKubeClients(local.kubeConfig).core.listNamespacedEvent({ namespace: NS });
  return list.items.filter((event) => event.involvedObject.name === secretName);
}

async function createRollout(sandbox: Sandbox, name: string): Promise<void> {
  const clients = createKubeClients(sandbox.kubeConfig);
  await installCrds(clients, rollgateCrds());
  await clients.custom.createNamespacedCustomObject({
    group: 'rollgate.dev',
    version: 'v1alpha1',
    namespace: 'default',
    plural: 'rollouts',
    body: {
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'Rollout',
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image: `shop/${name}:1` }] },
        },
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
      },
    },
  });
}

beforeAll(async () => {
  bClock = new ManualClock(Date.now());
  [local, a, b] = await Promise.all([
    startSandbox(),
    startSandbox({ token: A_TOKEN }),
    startSandbox({ token: 'admin-token-of-b', clock: bClock }),
  ]);
  tls = await startTlsTestServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"major":"1","minor":"30","gitVersion":"v1.30.0"}');
  });
  const localClients = createKubeClients(local.kubeConfig);
  await localClients.core.createNamespace({ body: { metadata: { name: NS } } });
  await createRollout(a, 'checkout');
  await createRollout(local, 'home');
  kubeconfig = join(mkdtempSync(join(tmpdir(), 'rollgate-clusters-')), 'kubeconfig');
  await local.writeKubeconfig(kubeconfig);
  const config = loadConfig({ env: { ROLLGATE_CLUSTER_SECRETS_ENABLED: 'true' } });
  expect(config.clusterSecrets.enabled).toBe(true);
  set = await openClusterSet(config, connection(local), {
    clock: systemClock,
    logger: silentLogger,
    // Fast probes so a change shows within a second; the schedule itself is unit-tested.
    probeSchedule: { readyIntervalMs: 200, failing: { baseMs: 100, capMs: 400, jitter: 0 } },
    watchBackoff: { baseMs: 100, capMs: 500, jitter: 0 },
  });
  set.subscribe((event: ClusterEvent) => heard.push(`${event.kind} ${event.cluster.name}`));
}, 60_000);

afterAll(async () => {
  await set?.close();
  await tls?.close();
  await Promise.all([local?.stop(), a?.stop(), b?.stop()]);
});

describe('clusters registered by Argo CD cluster Secrets', () => {
  it('knows the local cluster as in-cluster, Ready', async () => {
    expect(set.local().name).toBe('in-cluster');
    await eventually('the local cluster Ready', () => set.state('in-cluster')?.phase === 'Ready');
  });

  it('registers a cluster when its Secret appears, with its own connection, Ready', async () => {
    await putSecret(
      clusterSecret('cluster-a', {
        name: 'eu-west-1',
        server: a.url,
        config: JSON.stringify({ bearerToken: A_TOKEN, tlsClientConfig: { insecure: false } }),
      }),
    );
    const handle = await eventually('eu-west-1 registered', () => set.get('eu-west-1'));
    expect(handle).toMatchObject({ origin: 'argocd-secret', server: a.url });
    expect(handle.kube.clients.kubeConfig).not.toBe(set.local().kube.clients.kubeConfig);
    expect(heard).toContain('added eu-west-1');
    await eventually('eu-west-1 Ready', () => set.state('eu-west-1')?.phase === 'Ready');
    // The connection works: the remote's Rollout is there.
    const list = await handle.kube.clients.custom.listNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
    });
    expect(
      (list as { items: Array<{ metadata: { name: string } }> }).items.map((r) => r.metadata.name),
    ).toEqual(['checkout']);
  });

  it('says Unauthorized when its token expires, with an Event on the Secret that holds no token', async () => {
    const core = createKubeClients(b.kubeConfig).core;
    await core.createNamespacedServiceAccount({
      namespace: 'default',
      body: { metadata: { name: 'rollgate' } },
    });
    const token = b.serviceAccountToken('default', 'rollgate', { expirationSeconds: 600 });
    await putSecret(
      clusterSecret('cluster-b', {
        name: 'us-east-1',
        server: b.url,
        config: JSON.stringify({ bearerToken: token }),
      }),
    );
    await eventually('us-east-1 Ready', () => set.state('us-east-1')?.phase === 'Ready');
    bClock.advance(601_000);
    const state = await eventually('us-east-1 Unauthorized', () => {
      const s = set.state('us-east-1');
      return s?.phase === 'Unauthorized' ? s : undefined;
    });
    expect(state.message).toMatch(/401 Unauthorized: an expired or revoked token/);
    const events = await eventually('an Event on cluster-b', async () => {
      const found = await eventsOn('cluster-b');
      return found.some((e) => e.reason === 'ClusterUnauthorized') ? found : undefined;
    });
    const warning = events.find((e) => e.reason === 'ClusterUnauthorized');
    expect(warning).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Secret', name: 'cluster-b' } });
    expect(warning?.message).toContain('cluster "us-east-1": Unauthorized');
    expect(JSON.stringify(events)).not.toContain(token);

    // A fresh token in the Secret re-registers it (a changed connection) and it is Ready again.
    const fresh = b.serviceAccountToken('default', 'rollgate', { expirationSeconds: 3600 });
    await putSecret(
      clusterSecret('cluster-b', {
        name: 'us-east-1',
        server: b.url,
        config: JSON.stringify({ bearerToken: fresh }),
      }),
    );
    await eventually('us-east-1 changed', () => heard.includes('changed us-east-1'));
    await eventually('us-east-1 Ready again', () => set.state('us-east-1')?.phase === 'Ready');
  });

  it('says Invalid for a server whose certificate no configured CA vouches for', async () => {
    const stranger = selfSignedCertificate().cert.toString('base64');
    await putSecret(
      clusterSecret('cluster-tls', {
        name: 'edge-1',
        server: tls.url,
        config: JSON.stringify({ bearerToken: 'x', tlsClientConfig: { caData: stranger } }),
      }),
    );
    const state = await eventually('edge-1 Invalid', () => {
      const s = set.state('edge-1');
      return s?.phase === 'Invalid' ? s : undefined;
    });
    expect(state.message).toMatch(/not issued by an authority this registration trusts/);
    // With the server's own CA it is Ready.
    await putSecret(
      clusterSecret('cluster-tls', {
        name: 'edge-1',
        server: tls.url,
        config: JSON.stringify({
          bearerToken: 'x',
          tlsClientConfig: { caData: tls.cert.toString('base64') },
        }),
      }),
    );
    await eventually('edge-1 Ready with the right CA', () => set.state('edge-1')?.phase === 'Ready');
  });

  it('refuses a bad Secret without stopping anything: Invalid, with a Warning Event naming the field', async () => {
    await putSecret(
      clusterSecret('cluster-bad', {
        name: 'edge-2',
        server: 'https//nowhere',
        config: '{"bearerToken":"tok-123"',
      }),
    );
    await putSecret(
      clusterSecret('cluster-eks', {
        name: 'edge-3',
        server: 'https://eks.example.com',
        config: JSON.stringify({ awsAuthConfig: { clusterName: 'x', roleARN: 'arn' } }),
      }),
    );
    const bad = await eventually('edge-2 Invalid', () => set.state('edge-2'));
    expect(bad).toMatchObject({ phase: 'Invalid', declaredBy: `Secret ${NS}/cluster-bad` });
    expect(bad.message).toMatch(
      /data\.server "https\/\/nowhere" is not a URL; data\.config is not valid JSON/,
    );
    expect(set.get('edge-2')).toBeUndefined();
    expect((await eventually('edge-3 Invalid', () => set.state('edge-3')))?.message).toMatch(
      /^unsupported: awsAuthConfig/,
    );
    const events = await eventually('an Event on cluster-bad', async () => {
      const found = await eventsOn('cluster-bad');
      return found.length > 0 ? found : undefined;
    });
    expect(events[0]).toMatchObject({ type: 'Warning', reason: 'ClusterInvalid' });
    expect(JSON.stringify(events)).not.toContain('tok-123');
    // Everything else still runs.
    expect(set.state('eu-west-1')?.phase).toBe('Ready');
  });

  it('lists a cluster by name, and every cluster with a CLUSTER column', async () => {
    const one = await runCli('list', 'rollouts', '--cluster', 'eu-west-1', '--kubeconfig', kubeconfig);
    expect(one).toMatchObject({ code: 0 });
    expect(one.stdout).toMatch(/^NAME\s+STRATEGY/);
    expect(one.stdout).toMatch(/\ncheckout\s+Canary/);

    const all = await runCli('list', 'rollouts', '-A', '--all-clusters', '--kubeconfig', kubeconfig);
    const lines = all.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^CLUSTER\s+NAMESPACE\s+NAME\s+STRATEGY/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 3).join(' '))).toEqual([
      'eu-west-1 default checkout',
      'in-cluster default home',
    ]);
    // The clusters that cannot be read are said, and fail the exit code; the others are listed all the same.
    expect(all.code).toBe(1);
    expect(all.stderr).toContain('rollgate: cluster edge-2: Invalid (Secret rollgate-system/cluster-bad)');

    const unknown = await runCli(
      'get',
      'rollout',
      'checkout',
      '--cluster',
      'mars',
      '--kubeconfig',
      kubeconfig,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown cluster "mars" \(clusters: in-cluster, .*eu-west-1.*us-east-1/);
  });

  it('drops a cluster when its Secret is deleted, with no restart', async () => {
    const before = set.get('eu-west-1');
    expect(before).toBeDefined();
    await createKubeClients(local.kubeConfig).core.deleteNamespacedSecret({
      namespace: NS,
      name: 'cluster-a',
    });
    await eventually('eu-west-1 dropped', () => set.get('eu-west-1') === undefined);
    expect(heard).toContain('removed eu-west-1');
    expect(set.state('eu-west-1')).toBeUndefined();
    expect(set.current().map((c) => c.name)).not.toContain('eu-west-1');
  });
});
