// Blue-green through the real client and executor against the sandbox: preview, promote, switch, old scaled down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObservedState } from '../../../src/rollout/index.ts';
import { ROLLGATE_API_VERSION } from '../../../src/spec/rollout.ts';
import { ReconcileHarness, isFullyPromoted, NAMESPACE } from './reconcile-harness.ts';

const HASH = 'rollouts-pod-template-hash';

function blueGreenRollout(image: string): Record<string, unknown> {
  return {
    apiVersion: ROLLGATE_API_VERSION,
    kind: 'Rollout',
    metadata: { name: 'bg', namespace: NAMESPACE },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'bg' } },
      template: {
        metadata: { labels: { app: 'bg' } },
        spec: { containers: [{ name: 'app', image }] },
      },
      strategy: {
        blueGreen: {
          activeService: 'bg-active',
          previewService: 'bg-preview',
          previewReplicaCount: 1,
          autoPromotionEnabled: false,
          scaleDownDelaySeconds: 5,
        },
      },
    },
  };
}

describe('blue-green against the sandbox', () => {
  let harness: ReconcileHarness;
  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 16 });
  });
  afterAll(async () => harness.stop());

  async function selector(name: string): Promise<string | undefined> {
    return (await harness.clients.core.readNamespacedService({ namespace: NAMESPACE, name })).spec
      ?.selector?.[HASH];
  }

  /** Never: the active Service on a ReplicaSet with no available pod, or one scaled to 0. */
  const activeProblems: string[] = [];
  function checkActive(observed: ObservedState): void {
    const active = observed.services.find((s) => s.name === 'bg-active')?.selector[HASH];
    if (active === undefined) return;
    const rs = observed.replicaSets.find((candidate) => candidate.podTemplateHash === active);
    if (rs === undefined || rs.replicas === 0 || rs.status.availableReplicas === 0)
      activeProblems.push(`active on ${active}: ${JSON.stringify(rs?.status)} replicas ${rs?.replicas}`);
  }

  it('previews the new revision, waits for promote, switches, then scales the old one down after its delay', async () => {
    await harness.createService('bg-active', { app: 'bg' });
    await harness.createService('bg-preview', { app: 'bg' });
    const key = await harness.createRollout(blueGreenRollout('app:1.0'));
    const started = (observed: ObservedState, done: boolean): boolean => {
      checkActive(observed);
      return done;
    };
    // The first revision has nothing to switch from (the shared steady state): checked from the update on.
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    const first = (await harness.observe(key)).rollout.status?.stableRS ?? '';
    expect(await selector('bg-active')).toBe(first);
    expect(await selector('bg-preview')).toBe(first);

    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'bg' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    await harness.runUntil(key, (o) => started(o, o.rollout.status?.phase === 'Paused'), {
      timeoutMs: 60_000,
    });
    let observed = await harness.observe(key);
    const next = observed.rollout.status?.currentPodHash ?? '';
    expect(next).not.toBe(first);
    expect(observed.rollout.status?.pauseConditions?.[0]?.reason).toBe('BlueGreenPause');
    expect(observed.replicaSets.find((rs) => rs.podTemplateHash === next)?.replicas).toBe(1);
    expect(await selector('bg-preview')).toBe(next);
    expect(await selector('bg-active')).toBe(first);

    // rollgate promote: the pause condition goes, controllerPause stays.
    await harness.clients.custom.patchNamespacedCustomObjectStatus(
      {
        group: 'rollgate.dev',
        version: 'v1alpha1',
        plural: 'rollouts',
        ...key,
        body: { status: { pauseConditions: null } },
      },
      (await import('../../../src/kube/client.ts')).MERGE_PATCH,
    );
    await harness.runUntil(key, (o) => started(o, o.rollout.status?.phase === 'Healthy'), {
      timeoutMs: 60_000,
    });
    observed = await harness.observe(key);
    expect(observed.rollout.status?.stableRS).toBe(next);
    expect(await selector('bg-active')).toBe(next);
    expect(observed.replicaSets.find((rs) => rs.podTemplateHash === first)?.replicas).toBe(3);
    const took = await harness.runUntil(key, (o) => started(o, isFullyPromoted(o)), { timeoutMs: 60_000 });
    expect(took).toBeGreaterThanOrEqual(4_000);
    expect(activeProblems).toEqual([]);
    expect(harness.violations.filter((v) => v.message.includes('scale-down-deadline'))).toEqual([]);
  });
});
