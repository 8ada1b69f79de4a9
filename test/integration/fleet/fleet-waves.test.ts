// A Fleet walked for real: one Rollgate over three sandbox clusters (the local one as staging, eu-west-1,
// us-east-1), one source per cluster from one bare repository behind git http-backend, the Rollout's canary
// run by the clusters' own reconcilers. A commit reaches the waves in order (later waves held at the
// previous revision); an image missing from eu-west-1's registry aborts its canary, which stops the fleet
// before us-east-1; a fixed commit walks the fleet again from wave 0.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_CLUSTER } from '../../../src/clusters/cluster-set.ts';
import { imageOf, startClustersScene, type ClustersScene } from '../../support/clusters-scene.ts';
import { eventually } from '../../support/eventually.ts';
import {
  applyFleet,
  fleetRolloutYaml,
  healthyOn,
  readFleet,
  snapshot,
  walkWaves,
} from '../../support/fleet-walk.ts';

const STAGING = LOCAL_CLUSTER;
const CLUSTERS = [STAGING, 'eu-west-1', 'us-east-1'] as const;
const WAVES = [[STAGING], ['eu-west-1'], ['us-east-1']];
/** A walk through three waves (syncs every second, a canary each) under a loaded machine's CPU. */
const WALK_MS = 50_000;
let scene: ClustersScene;

/** The Rollout: one canary step (no pause), so a healthy canary finishes at once; a stuck one aborts in 2 s. */
function rolloutYaml(image: string): string {
  return fleetRolloutYaml(image, { progressDeadlineSeconds: 2, weights: [50] });
}

const fleet = () => readFleet(scene, 'web');
const everywhere = (image: string) => (s: Awaited<ReturnType<typeof snapshot>>) =>
  CLUSTERS.every((c) => healthyOn(s, c, image));
/** The commits of web:1.0 and of web:2.0 (where us-east-1 stays while the fleet is stopped). */
let rev1 = '';
let rev2 = '';

beforeAll(async () => {
  scene = await startClustersScene({
    name: 'fleet-waves',
    redisUrl: inject('redisUrl'),
    clusters: [
      { name: 'eu-west-1', sandbox: { missingImages: ['web:3.0'] } },
      { name: 'us-east-1', sandbox: {} },
    ],
    rolloutYaml,
  });
  rev1 = await scene.push('web:1.0');
  await scene.startRollgate({
    config: {
      sources: [
        scene.source('staging', STAGING),
        scene.source('eu', 'eu-west-1'),
        scene.source('us', 'us-east-1'),
      ],
    },
    start: { dependencyCheckIntervalMs: 200, fleetResyncMs: 300 },
  });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe('a Fleet over three clusters, with real syncs and canaries', () => {
  it('deploys the first revision everywhere, then the Fleet sees it Healthy', async () => {
    await walkWaves(scene, WAVES, 'web:1.0', everywhere('web:1.0'), 'web:1.0 Healthy everywhere');
    // The Fleet comes after the first revision (its CRD is installed by Rollgate at start).
    await applyFleet(
      scene,
      `apiVersion: rollgate.dev/v1alpha1
kind: Fleet
metadata: { name: web, namespace: ${scene.stateNamespace} }
spec:
  rollout: { path: deploy/web.yaml, name: web }
  waves:
    - { name: canary, clusters: [${STAGING}] }
    - { name: first-region, clusters: [eu-west-1] }
    - { name: rest, rest: true }
`,
    );
    const seen = await eventually('the Fleet Healthy on web:1.0', async () => {
      const f = await fleet();
      return f.status?.phase === 'Healthy' && f.status.revision === rev1 ? f : undefined;
    });
    expect(seen.status?.clusters?.map((c) => c.name).sort()).toEqual([...CLUSTERS].sort());
  });

  it('walks web:2.0 through the waves in order: eu-west-1 after staging, us-east-1 after eu-west-1', async () => {
    const revision = await scene.push('web:2.0');
    rev2 = revision;
    const { violations } = await walkWaves(
      scene,
      WAVES,
      'web:2.0',
      everywhere('web:2.0'),
      'web:2.0 Healthy everywhere',
      WALK_MS,
    );
    expect(violations).toEqual([]);
    await eventually('the Fleet Healthy on web:2.0', async () => {
      const f = await fleet();
      return f.status?.phase === 'Healthy' && f.status.revision === revision;
    });
  }, 60_000);

  it('stops at eu-west-1 when its canary aborts (image missing there): us-east-1 keeps web:2.0', async () => {
    const revision = await scene.push('web:3.0');
    let usRan = false;
    const stopped = await eventually(
      'the Fleet stopped by eu-west-1',
      async () => {
        if (imageOf(await scene.rolloutIn('us-east-1')) === 'web:3.0') usRan = true;
        const f = await fleet();
        return f.status?.phase === 'Stopped' ? f : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(usRan).toBe(false);
    expect(stopped.status?.stoppedBy).toMatchObject({ cluster: 'eu-west-1', revision });
    expect(stopped.status?.stoppedBy?.step).toBeTruthy();
    const s = await snapshot(scene, CLUSTERS);
    expect(s[STAGING]).toEqual({ image: 'web:3.0', phase: 'Healthy' });
    expect(s['eu-west-1']?.image).toBe('web:3.0');
    expect(s['eu-west-1']?.phase).toBe('Degraded');
    expect(s['us-east-1']).toEqual({ image: 'web:2.0', phase: 'Healthy' });
    // us-east-1's source synced the commit but says it holds the Rollout (not merely slow).
    const held = await eventually('source us to say the fleet holds web', async () => {
      const status = await scene.sourceStatus('us');
      return status.message?.includes(`held by fleet ${scene.stateNamespace}/web until wave rest`)
        ? status
        : undefined;
    });
    expect(held.message).toContain(`applied at ${rev2.slice(0, 7)}`);
    expect(imageOf(await scene.rolloutIn('us-east-1'))).toBe('web:2.0');
  });

  it('walks a fixed commit (web:3.1) from wave 0 to every cluster', async () => {
    const revision = await scene.push('web:3.1');
    const { violations } = await walkWaves(
      scene,
      WAVES,
      'web:3.1',
      everywhere('web:3.1'),
      'web:3.1 Healthy everywhere',
      WALK_MS,
    );
    expect(violations).toEqual([]);
    await eventually('the Fleet Healthy on web:3.1', async () => {
      const f = await fleet();
      return f.status?.phase === 'Healthy' && f.status.revision === revision;
    });
  }, 60_000);
});
