// examples/rollout-workloadref.yaml kept in Git under a whole Rollgate with selfHeal: the Rollout takes the Deployment's pods
// over, and neither the drift check nor the sync of a new Deployment template brings Git's replicas back.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import { startPipeline, type Pipeline } from './pipeline-harness.ts';

const EXAMPLE = readFileSync(
  join(import.meta.dirname, '..', '..', '..', 'examples', 'rollout-workloadref.yaml'),
  'utf8',
);
const NAME = 'workload-demo';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

describe('a workloadRef Deployment kept in Git', () => {
  it('is handed over to the Rollout and stays at 0 through drift checks with selfHeal and a new template from Git', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({ 'apps/workload.yaml': EXAMPLE });
    p.work.commit('a Deployment and the Rollout that takes it over');
    await p.work.push(p.repoUrl);
    const running = await p.start({ selfHeal: true, interval: '1s' });

    const deployment = async () =>
      p.clients.apps.readNamespacedDeployment({ namespace: 'default', name: NAME }).catch(() => undefined);
    await eventually(
      'the Rollout healthy on the Deployment template',
      async () => (await p.rollout(NAME))?.status?.phase === 'Healthy',
      {
        timeoutMs: 30_000,
      },
    );
    const handedOver = await eventually('the Deployment at 0', async () => {
      const live = await deployment();
      return live?.spec?.replicas === 0 ? live : undefined;
    });
    const generation = handedOver.metadata?.generation ?? 0;
    // Several drift checks with selfHeal on (one with each poll, a second apart here): Git's `replicas: 3`
    // is not put back. Three more polls counted: the two before the last have done their drift check.
    const polls = await p.polls(running);
    await eventually('three more polls', async () => (await p.polls(running)) >= polls + 3);
    expect((await deployment())?.metadata?.generation).toBe(generation);

    // A new image in Git: the sync applies the template, not Git's replica count.
    p.work.write({
      'apps/workload.yaml': EXAMPLE.replace('ghcr.io/rollgate/web:1.0.0', 'ghcr.io/rollgate/web:1.1.0'),
    });
    p.work.commit('web 1.1.0');
    await p.work.push(p.repoUrl);
    const canary = await eventually(
      'the new revision canaried',
      async () => {
        const status = (await p.rollout(NAME))?.status;
        return status?.currentPodHash !== undefined && status.currentPodHash !== status.stableRS
          ? status
          : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(canary.phase).not.toBe('Degraded');
    const after = await deployment();
    expect(after?.spec?.template?.spec?.containers[0]?.image).toBe('ghcr.io/rollgate/web:1.1.0');
    expect(after?.spec?.replicas).toBe(0);
    // One write of the Deployment: the template. No replicas came and went.
    expect(after?.metadata?.generation).toBe(generation + 1);
  }, 60_000);
});
