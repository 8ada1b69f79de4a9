// /metrics of a process driving both groups: rollgate_queue_jobs counts the argoproj.io reconciler's own queue (its own
// Redis prefix), labelled group="argoproj.io", beside rollgate.dev's.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import { startControllerScene, type ControllerScene } from './controller-scene.ts';

let scene: ControllerScene;

beforeAll(async () => {
  scene = await startControllerScene({
    redisUrl: inject('redisUrl'),
    groups: ['rollgate.dev', 'argoproj.io'],
  });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

/** The reconcile queues' depth series from /metrics: `group state` → count. */
async function reconcileDepths(): Promise<Map<string, number>> {
  const text = await (await fetch(`${scene.url}/metrics`)).text();
  const depths = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('rollgate_queue_jobs{') || !line.includes('queue="reconcile"')) continue;
    const group = /group="([^"]*)"/.exec(line)?.[1] ?? '';
    const state = /state="([^"]*)"/.exec(line)?.[1] ?? '';
    depths.set(`${group} ${state}`, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return depths;
}

describe('queue depths in controller mode', () => {
  it('counts the argoproj.io reconciler\'s queue under group="argoproj.io": a Rollout waiting out a 1h pause is one delayed job there', async () => {
    const steps = [{ setWeight: 50 }, { pause: { duration: '1h' } }];
    await scene.createCanary('argoproj.io', 'waiting', 'waiting', steps);
    await scene.healthy('argoproj.io', 'waiting');
    await scene.setImage('argoproj.io', 'waiting', 'shop/waiting:2');
    await scene.pausedAt('argoproj.io', 'waiting', 1);

    const depths = await eventually(
      'the argoproj.io reconcile queue holds the delayed look at the pause end',
      async () => {
        const read = await reconcileDepths();
        return (read.get('argoproj.io delayed') ?? 0) >= 1 ? read : undefined;
      },
      { timeoutMs: 15_000 },
    );
    // Both groups' queues are reported, each once, and rollgate.dev's holds no job of the argoproj.io Rollout.
    expect([...depths.keys()].filter((key) => key.endsWith(' waiting')).sort()).toEqual([
      'argoproj.io waiting',
      'rollgate.dev waiting',
    ]);
    expect(depths.get('rollgate.dev delayed')).toBe(0);
  }, 90_000);
});
