// Promotion gates end to end (GitHub double, real repositories, sandbox): the pull request waits for the soak,
// and auto-merge waits for the approval label, then for a deny window to close, saying so on the pull request.
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  bothEnvironmentsHealthy,
  lookAtEveryPromotion,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  webInBothEnvironments,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { eventually } from '../../support/eventually.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';

/**
 * Long enough that the look right after staging turned Healthy falls inside it (that look takes well under a
 * second on a quiet machine), short enough not to be most of the test: it is waited out in real time.
 */
const SOAK_S = 8;
let scene: PromotionScene | undefined;

afterEach(async () => {
  await scene?.stop();
  scene = undefined;
});

/** A deny window that opened a minute ago and lasts two hours (UTC): closed for the whole test. */
function denyWindowOpenNow(): { kind: 'deny'; schedule: string; duration: string; timeZone: string } {
  const start = new Date(Date.now() - 60_000);
  return {
    kind: 'deny',
    schedule: `${start.getUTCMinutes()} ${start.getUTCHours()} * * *`,
    duration: '2h',
    timeZone: 'UTC',
  };
}

describe('promotion gates (GitHub)', () => {
  it('opens the pull request only after the soak; auto-merge waits for approval, then for the window', async () => {
    const window = denyWindowOpenNow();
    scene = await startPromotionScene({
      redisUrl: inject('redisUrl'),
      files: webInBothEnvironments(webRollout('registry.example/web:1.0.0')),
      autoMerge: { checksInterval: '1s' },
      gates: { soak: `${SOAK_S}s`, windows: [window], requireApproval: { label: 'approved' } },
    });
    const { double, clients } = scene;
    const pulls = () => [...double.repository(REPO).pulls.values()];
    const comments = (number: number) =>
      double
        .repository(REPO)
        .comments.filter((c) => c.issueNumber === number)
        .map((c) => c.body);
    await bothEnvironmentsHealthy(scene);

    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': webRollout('registry.example/web:2.0.0') });
    const healthySince = await eventually(
      'staging Healthy at 2.0.0',
      async () => {
        const live = await liveWebRollout(clients, 'staging');
        const status = live?.status as
          { conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> } | undefined;
        const healthy = status?.conditions?.find((c) => c.type === 'Healthy' && c.status === 'True');
        return live?.spec.template.spec.containers[0]?.image === 'registry.example/web:2.0.0' &&
          healthy?.lastTransitionTime !== undefined
          ? Date.parse(healthy.lastTransitionTime)
          : undefined;
      },
      { timeoutMs: 40_000 },
    );
    // Finished its canary, but soaking: a look now opens nothing.
    await lookAtEveryPromotion(scene);
    if (Date.now() < healthySince + SOAK_S * 1000) expect(pulls()).toHaveLength(0);

    // The look the soak scheduled opens it, not before the revision stayed Healthy that long.
    const pull = await eventually('the promotion pull request', () => pulls()[0], { timeoutMs: 60_000 });
    expect(Date.parse(pull.createdAt)).toBeGreaterThanOrEqual(healthySince + SOAK_S * 1000 - 1000);
    expect(pull.title).toBe('Promote web to 2.0.0');

    // Checks pass at once (none configured), but no one approved: it says what it waits for.
    await eventually('the approval comment', () =>
      comments(pull.number).some((body) => body.includes('add the label `approved`')),
    );
    const pullNow = () => double.repository(REPO).pulls.get(pull.number);
    expect(pullNow()?.state).toBe('open');
    // A reviewer labels it in the forge's UI (GitHub lists only labels the repository has).
    double
      .repository(REPO)
      .labels.set('approved', { id: double.ids.take(), name: 'approved', color: '0e8a16' });
    pullNow()?.labels.push('approved');

    // Approved, but inside the deny window: it says why, and when it will merge.
    const note = await eventually('the window comment', () =>
      comments(pull.number).find((body) => body.startsWith('Auto-merge waits: inside the deny window')),
    );
    expect(note).toContain(`deny window "${window.schedule}" (2h, UTC)`);
    expect(note).toMatch(/it will merge from \d{4}-\d\d-\d\d \d\d:\d\d UTC \(\S+Z\) once its checks pass/);
    await lookAtEveryPromotion(scene);
    expect(pullNow()?.state).toBe('open');
    expect(pullNow()?.mergedAt).toBeUndefined();
    // Told once, however many looks.
    expect(comments(pull.number).filter((body) => body.startsWith('Auto-merge waits'))).toHaveLength(2);
    expect(double.violations()).toEqual([]);
  }, 150_000);
});
