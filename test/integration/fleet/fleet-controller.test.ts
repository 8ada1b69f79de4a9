// The fleet controller over three sandbox clusters: waves open in order, a held cluster is woken, an abort stops the fleet.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fixedClusterSet, type ClusterHandle } from '../../../src/clusters/cluster-set.ts';
import { systemClock } from '../../../src/clock/clock.ts';
import { formatFleet } from '../../../src/cli/get-fleet.ts';
import { fleetReadOf } from '../../../src/fleet/fleet-reads.ts';
import { FleetRolloutHolds } from '../../../src/fleet/fleet-rollout-holds.ts';
import type { FleetStatus } from '../../../src/fleet/fleet-status.ts';
import {
  startFleetController,
  type RunningFleetController,
} from '../../../src/fleet/start-fleet-controller.ts';
import { createKubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { HeldSources } from '../../../src/queue/held-sources.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

const R1 = '1'.repeat(40);
const R2 = '2'.repeat(40);
const NAMES = ['staging', 'eu-west-1', 'us-east-1'];
const PATH = 'apps/web/rollout.yaml';
const group = { group: 'rollgate.dev', version: 'v1alpha1' };

let sandboxes: Sandbox[] = [];
let handles: ClusterHandle[] = [];
let scope: RedisTestScope;
let controller: RunningFleetController;

const custom = (cluster: string) => handles.find((h) => h.name === cluster)!.kube.clients.custom;

/** The Rollout as a source's sync leaves it in a cluster (file and commit annotations), with a status. */
async function rolloutIn(cluster: string, revision: string, status: Record<string, unknown>): Promise<void> {
  const api = custom(cluster);
  const body = {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'Rollout',
    metadata: {
      name: 'web',
      namespace: 'default',
      annotations: { 'rollgate.dev/file': PATH, 'rollgate.dev/commit': revision },
    },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'web:1' }] },
      },
      strategy: { canary: { steps: [{ setWeight: 20 }, { pause: {} }, { setWeight: 60 }] } },
    },
  };
  let live: { metadata: { resourceVersion: string } };
  try {
    const read = (await api.getNamespacedCustomObject({
      ...group,
      namespace: 'default',
      plural: 'rollouts',
      name: 'web',
    })) as typeof live;
    live = (await api.replaceNamespacedCustomObject({
      ...group,
      namespace: 'default',
      plural: 'rollouts',
      name: 'web',
      body: { ...body, metadata: { ...body.metadata, resourceVersion: read.metadata.resourceVersion } },
    })) as typeof live;
  } catch {
    live = (await api.createNamespacedCustomObject({
      ...group,
      namespace: 'default',
      plural: 'rollouts',
      body,
    })) as typeof live;
  }
  await api.replaceNamespacedCustomObjectStatus({
    ...group,
    namespace: 'default',
    plural: 'rollouts',
    name: 'web',
    body: { ...body, metadata: { ...body.metadata, resourceVersion: live.metadata.resourceVersion }, status },
  });
}

const healthy = { phase: 'Healthy', currentStepIndex: 3 };

async function fleetStatus(): Promise<FleetStatus> {
  const fleet = (await custom('staging').getNamespacedCustomObject({
    ...group,
    namespace: 'rollgate-system',
    plural: 'fleets',
    name: 'web',
  })) as { status: FleetStatus };
  return fleet.status;
}

beforeAll(async () => {
  sandboxes = await Promise.all(NAMES.map(() => startSandbox()));
  handles = NAMES.map((name, i) => {
    const clients = createKubeClients(sandboxes[i]!.kubeConfig);
    return {
      name,
      origin: i === 0 ? 'local' : 'kubeconfig',
      server: sandboxes[i]!.url,
      kube: { clients, namespace: 'default', source: 'flag', origin: sandboxes[i]!.url },
    } satisfies ClusterHandle;
  });
  await Promise.all(handles.map((h) => installCrds(h.kube.clients, rollgateCrds())));
  await handles[0]!.kube.clients.core.createNamespace({ body: { metadata: { name: 'rollgate-system' } } });
  await custom('staging').createNamespacedCustomObject({
    ...group,
    namespace: 'rollgate-system',
    plural: 'fleets',
    body: {
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'Fleet',
      metadata: { name: 'web', namespace: 'rollgate-system' },
      spec: {
        rollout: { path: PATH },
        waves: [
          { name: 'canary', clusters: ['staging'] },
          { name: 'first-region', clusters: ['eu-west-1'] },
          { name: 'rest', rest: true },
        ],
      },
    },
  });
  scope = await openRedisTestScope(inject('redisUrl'));
  controller = startFleetController({
    clusters: fixedClusterSet(handles[0]!, handles.slice(1)),
    namespace: 'rollgate-system',
    redis: scope.connection,
    prefix: scope.prefix,
    clock: systemClock,
    logger: silentLogger,
    resyncMs: 3_600_000,
  });
}, 60_000);

afterAll(async () => {
  await controller?.stop({ force: true });
  await scope?.cleanup();
  await Promise.all(sandboxes.map((s) => s.stop()));
});

describe('fleet controller', () => {
  it('walks a revision wave by wave, holding later clusters until their wave opens, and stops on an abort', async () => {
    for (const name of NAMES) await rolloutIn(name, R1, healthy);
    // The first revision seen walks too: one wave opens per pass (each already runs it here).
    for (let pass = 0; pass < 3; pass++) await controller.pass({ namespace: 'rollgate-system', name: 'web' });
    expect(await fleetStatus()).toMatchObject({ phase: 'Healthy', revision: R1 });

    // A new commit reaches the canary cluster (wave 0 is never held); the others are held at R1.
    await rolloutIn('staging', R2, { phase: 'Paused', currentStepIndex: 1 });
    await controller.pass({ namespace: 'rollgate-system', name: 'web' });
    const walking = await fleetStatus();
    expect(walking).toMatchObject({ phase: 'Progressing', revision: R2, currentWave: 0 });
    expect(walking.message).toBe('wave canary: staging Paused at step 2/3');
    const heldSources = new HeldSources(scope.connection, scope.prefix);
    const holds = new FleetRolloutHolds({
      local: handles[0]!.kube.clients,
      namespace: 'rollgate-system',
      cluster: 'eu-west-1',
      heldSources,
    });
    expect(await holds.holdOf({ file: PATH, name: 'web' }, R2, 'apps-eu')).toEqual({
      fleet: 'rollgate-system/web',
      wave: 'first-region',
      revision: R1,
    });

    // Healthy in the canary: the next wave opens and its held source is woken (a poll is queued).
    await rolloutIn('staging', R2, healthy);
    await controller.pass({ namespace: 'rollgate-system', name: 'web' });
    expect(await fleetStatus()).toMatchObject({ currentWave: 1 });
    expect(await holds.holdOf({ file: PATH, name: 'web' }, R2, 'apps-eu', true)).toBeUndefined();
    expect(await heldSources.take('rollgate-system/web', 'eu-west-1')).toEqual([]);
    const poll = await scope.connection.keys(`{${scope.prefix}}:poll:*`);
    expect(poll.length).toBeGreaterThan(0);

    // The canary aborts in the wave-2 cluster: the fleet stops and names it; us-east-1 stays held at R1.
    await rolloutIn('eu-west-1', R2, {
      phase: 'Degraded',
      abort: true,
      currentStepIndex: 1,
      message: 'ProgressDeadlineExceeded: ImagePullBackOff',
    });
    await controller.pass({ namespace: 'rollgate-system', name: 'web' });
    const stopped = await fleetStatus();
    expect(stopped.phase).toBe('Stopped');
    expect(stopped.stoppedBy).toEqual({
      cluster: 'eu-west-1',
      revision: R2,
      step: '2/3',
      reason: 'ProgressDeadlineExceeded: ImagePullBackOff',
    });
    // What `rollgate get fleet web` prints.
    const text = formatFleet(
      fleetReadOf(
        await custom('staging').getNamespacedCustomObject({
          ...group,
          namespace: 'rollgate-system',
          plural: 'fleets',
          name: 'web',
        }),
      ),
    );
    expect(text).toContain(
      'Stopped by:  eu-west-1 at step 2/3 on 2222222: ProgressDeadlineExceeded: ImagePullBackOff',
    );
    expect(text).toMatch(/us-east-1\s+rest\s+Held\s+1111111\s+1111111/);
    const usEast = new FleetRolloutHolds({
      local: handles[0]!.kube.clients,
      namespace: 'rollgate-system',
      cluster: 'us-east-1',
    });
    expect((await usEast.holdOf({ file: PATH, name: 'web' }, R2, 'apps-us', true))?.revision).toBe(R1);
  }, 60_000);
});
