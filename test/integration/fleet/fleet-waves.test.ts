// A Fleet walked for real: one Rollgate over three sandbox clusters (the local one as staging, eu-west-1,
// us-east-1), one source per cluster from one bare repository behind git http-backend, the Rollout's canary
// run by the clusters' own reconcilers. A commit reaches the waves in order (later waves held at the
// previous revision); an image missing from eu-west-1's registry aborts its canary, which stops the fleet
// before us-east-1; a fixed commit walks the fleet again from wave 0.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_CLUSTER } from '../../../src/clusters/cluster-set.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { STATUS_KEY, sourceStateName } from '../../../src/sync/source-state-object.ts';
import { eventually } from '../../support/eventually.ts';
import { kubeconfigClusterSet } from '../../support/kubeconfig-cluster-set.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

const STATE_NS = 'rollgate-system';
const STAGING = LOCAL_CLUSTER;
const CLUSTERS = [STAGING, 'eu-west-1', 'us-east-1'] as const;
let scene: SystemScene;
const remote: Record<string, Sandbox> = {};
const admin: Record<string, KubeClients> = {};

interface LiveRollout {
  metadata?: { annotations?: Record<string, string> };
  spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: { phase?: string };
}

interface FleetView {
  status?: {
    phase?: string;
    revision?: string;
    currentWave?: number;
    message?: string;
    stoppedBy?: { cluster?: string; revision?: string; step?: string; reason?: string };
    clusters?: Array<{ name: string; phase?: string; revision?: string; released?: string }>;
  };
}

async function rolloutIn(cluster: string): Promise<LiveRollout | undefined> {
  try {
    return toPlainObject<LiveRollout>(
      await admin[cluster]!.custom.getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'rollouts',
        name: 'web',
      }),
    );
  } catch {
    return undefined;
  }
}

async function fleet(): Promise<FleetView> {
  try {
    return toPlainObject<FleetView>(
      await scene.clients.custom.getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: STATE_NS,
        plural: 'fleets',
        name: 'web',
      }),
    );
  } catch {
    return {};
  }
}

const imageOf = (r: LiveRollout | undefined) => r?.spec?.template?.spec?.containers?.[0]?.image;

/** What a user sees in each cluster: the image its Rollout runs and whether it is Healthy on it. */
type Snapshot = Record<string, { image: string | undefined; phase: string | undefined }>;
async function snapshot(): Promise<Snapshot> {
  const out: Snapshot = {};
  for (const cluster of CLUSTERS) {
    const r = await rolloutIn(cluster);
    out[cluster] = { image: imageOf(r), phase: r?.status?.phase };
  }
  return out;
}
const healthyOn = (s: Snapshot, cluster: string, image: string) =>
  s[cluster]?.image === image && s[cluster]?.phase === 'Healthy';

/**
 * Samples every cluster until `done` holds of a snapshot; every snapshot on the way is checked against the
 * wave order: a cluster of a later wave never runs `image` before every earlier wave is Healthy on it.
 */
async function walk(image: string, done: (s: Snapshot) => boolean, what: string): Promise<string[]> {
  const waves = [[STAGING], ['eu-west-1'], ['us-east-1']];
  const violations: string[] = [];
  await eventually(
    what,
    async () => {
      const s = await snapshot();
      waves.forEach((wave, index) => {
        for (const cluster of wave) {
          if (s[cluster]?.image !== image) continue;
          for (const earlier of waves.slice(0, index).flat())
            if (!healthyOn(s, earlier, image))
              violations.push(`${cluster} ran ${image} while ${earlier} was ${JSON.stringify(s[earlier])}`);
        }
      });
      return done(s) ? s : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  return violations;
}

/** The Rollout: one canary step (no pause), so a healthy canary finishes at once; a stuck one aborts in 2 s. */
function rolloutYaml(image: string): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 2
  revisionHistoryLimit: 3
  progressDeadlineSeconds: 2
  progressDeadlineAbort: true
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: app
          image: ${image}
  strategy:
    canary:
      scaleDownDelaySeconds: 0
      steps:
        - setWeight: 50
`;
}

let work: ReturnType<SystemScene['workingCopy']>;
/** The commit of web:2.0, where us-east-1 stays while the fleet is stopped. */
let rev2 = '';
async function push(image: string): Promise<string> {
  work.write({ 'deploy/web.yaml': rolloutYaml(image) });
  work.commit(`web ${image}`);
  await work.push(scene.repoUrl('apps'));
  return work.head();
}

beforeAll(async () => {
  remote['eu-west-1'] = await startSandbox({ readyDelayMs: 100, missingImages: ['web:3.0'] });
  remote['us-east-1'] = await startSandbox({ readyDelayMs: 100 });
  scene = await startSystemScene({
    name: 'fleet-waves',
    redisUrl: inject('redisUrl'),
    repositories: ['apps'],
    config: { kubernetes: { stateNamespace: STATE_NS } },
  });
  scene.defer(() => Promise.all(Object.values(remote).map((s) => s.stop())));
  admin[STAGING] = scene.clients;
  for (const [name, sandbox] of Object.entries(remote)) admin[name] = createKubeClients(sandbox.kubeConfig);
  await scene.kubectl(['create', 'namespace', STATE_NS]);
  work = scene.workingCopy('apps');
  await push('web:1.0');
  const source = (name: string, cluster: string) => ({
    name,
    url: scene.repoUrl('apps'),
    path: 'deploy',
    interval: '1s',
    render: 'plain',
    cluster,
  });
  await scene.startRollgate({
    clusters: (local) =>
      kubeconfigClusterSet(
        local,
        Object.entries(remote).map(([name, sandbox]) => ({ name, kubeConfig: sandbox.kubeConfig })),
      ),
    config: {
      sources: [source('staging', STAGING), source('eu', 'eu-west-1'), source('us', 'us-east-1')],
    },
    start: { dependencyCheckIntervalMs: 200, fleetResyncMs: 300 },
  });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe('a Fleet over three clusters, with real syncs and canaries', () => {
  it('deploys the first revision everywhere, then the Fleet sees it Healthy', async () => {
    await walk(
      'web:1.0',
      (s) => CLUSTERS.every((c) => healthyOn(s, c, 'web:1.0')),
      'web:1.0 Healthy everywhere',
    );
    // The Fleet comes after the first revision (its CRD is installed by Rollgate at start).
    await eventually('the Fleet applied', async () => {
      try {
        await scene.apply(
          'fleet.yaml',
          `apiVersion: rollgate.dev/v1alpha1
kind: Fleet
metadata: { name: web, namespace: ${STATE_NS} }
spec:
  rollout: { path: deploy/web.yaml, name: web }
  waves:
    - { name: canary, clusters: [${STAGING}] }
    - { name: first-region, clusters: [eu-west-1] }
    - { name: rest, rest: true }
`,
        );
        return true;
      } catch {
        return false;
      }
    });
    const seen = await eventually('the Fleet Healthy on web:1.0', async () => {
      const f = await fleet();
      return f.status?.phase === 'Healthy' && f.status.revision === work.head() ? f : undefined;
    });
    expect(seen.status?.clusters?.map((c) => c.name).sort()).toEqual([...CLUSTERS].sort());
  });

  it('walks web:2.0 through the waves in order: eu-west-1 after staging, us-east-1 after eu-west-1', async () => {
    const revision = await push('web:2.0');
    rev2 = revision;
    const violations = await walk(
      'web:2.0',
      (s) => CLUSTERS.every((c) => healthyOn(s, c, 'web:2.0')),
      'web:2.0 Healthy everywhere',
    );
    expect(violations).toEqual([]);
    await eventually('the Fleet Healthy on web:2.0', async () => {
      const f = await fleet();
      return f.status?.phase === 'Healthy' && f.status.revision === revision;
    });
  });

  it('stops at eu-west-1 when its canary aborts (image missing there): us-east-1 keeps web:2.0', async () => {
    const revision = await push('web:3.0');
    let usRan = false;
    const stopped = await eventually(
      'the Fleet stopped by eu-west-1',
      async () => {
        if (imageOf(await rolloutIn('us-east-1')) === 'web:3.0') usRan = true;
        const f = await fleet();
        return f.status?.phase === 'Stopped' ? f : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(usRan).toBe(false);
    expect(stopped.status?.stoppedBy).toMatchObject({ cluster: 'eu-west-1', revision });
    expect(stopped.status?.stoppedBy?.step).toBeTruthy();
    const s = await snapshot();
    expect(s[STAGING]).toEqual({ image: 'web:3.0', phase: 'Healthy' });
    expect(s['eu-west-1']?.image).toBe('web:3.0');
    expect(s['eu-west-1']?.phase).toBe('Degraded');
    expect(s['us-east-1']).toEqual({ image: 'web:2.0', phase: 'Healthy' });
    // us-east-1's source synced the commit but says it holds the Rollout (not merely slow).
    const held = await eventually('source us to say the fleet holds web', async () => {
      const state = await scene.clients.core.readNamespacedConfigMap({
        name: sourceStateName('us'),
        namespace: STATE_NS,
      });
      const status = JSON.parse(state.data?.[STATUS_KEY] ?? '{}') as { message?: string };
      return status.message?.includes(`held by fleet ${STATE_NS}/web until wave rest`) ? status : undefined;
    });
    expect(held.message).toContain(`applied at ${rev2.slice(0, 7)}`);
    expect(imageOf(await rolloutIn('us-east-1'))).toBe('web:2.0');
  });

  it('walks a fixed commit (web:3.1) from wave 0 to every cluster', async () => {
    const revision = await push('web:3.1');
    const violations = await walk(
      'web:3.1',
      (s) => CLUSTERS.every((c) => healthyOn(s, c, 'web:3.1')),
      'web:3.1 Healthy everywhere',
    );
    expect(violations).toEqual([]);
    await eventually('the Fleet Healthy on web:3.1', async () => {
      const f = await fleet();
      return f.status?.phase === 'Healthy' && f.status.revision === revision;
    });
  });
});
