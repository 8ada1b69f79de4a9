// A promotion authenticated as a GitHub App: installation tokens minted with the App's key, and when they expire
// (the double's expire 60 s after minting; its clock is moved on) the next look mints another and goes on.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import {
  bothEnvironmentsHealthy,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  webInBothEnvironments,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { eventually } from '../../support/eventually.ts';
import { webRollout } from '../../support/web-rollout.ts';

let scene: PromotionScene | undefined;

afterEach(async () => {
  await scene?.stop();
  scene = undefined;
});

/** Real time plus what the test adds: tokens expire without waiting for them. */
function movableClock() {
  let offsetMs = 0;
  return {
    now: () => new Date(Date.now() + offsetMs),
    advance: (ms: number) => void (offsetMs += ms),
  };
}

describe('promotion as a GitHub App', () => {
  it('keeps working across an installation token expiry, and no key or token reaches the log or a status', async () => {
    const clock = movableClock();
    const chunks: string[] = [];
    const stream = new PassThrough();
    stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
    scene = await startPromotionScene({
      redisUrl: inject('redisUrl'),
      files: webInBothEnvironments(webRollout('registry.example/web:1.0.0')),
      githubApp: { clock },
      logger: createLogger({ format: 'json', destination: stream, level: 'debug' }),
    });
    const { double } = scene;
    await bothEnvironmentsHealthy(scene);

    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': webRollout('registry.example/web:2.0.0') });
    const pull = await eventually('the PR for 2.0.0', () => scene!.forge.openPulls()[0], {
      timeoutMs: 40_000,
    });
    expect(pull.title).toBe('Promote web to 2.0.0');
    // Opened by the App's bot, with a minted installation token.
    expect(pull.user.login).toBe('rollgate[bot]');
    const mintedBefore = double.mintedTokens.length;
    expect(mintedBefore).toBeGreaterThanOrEqual(1);

    // An hour passes for GitHub (here 61 s): every token minted so far is refused from now on.
    clock.advance(61_000);
    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': webRollout('registry.example/web:3.0.0') });
    await eventually(
      'the same PR now promotes 3.0.0',
      () => double.repository(REPO).pulls.get(pull.number)?.title === 'Promote web to 3.0.0',
      { timeoutMs: 40_000 },
    );
    expect(double.mintedTokens.length).toBeGreaterThan(mintedBefore);
    // The expired token was refused once, then a new one was minted and the request went through.
    expect(double.requests.some((r) => r.status === 401)).toBe(true);

    const log = chunks.join('');
    expect(log).toContain('commit status posted');
    expect(log).not.toContain('forge.unauthorized');
    expect(log).not.toContain('PRIVATE KEY');
    const statuses = JSON.stringify(double.repository(REPO).statuses);
    for (const { token } of double.mintedTokens) {
      expect(log).not.toContain(token);
      expect(statuses).not.toContain(token);
    }
    expect(double.violations()).toEqual([]);
  }, 150_000);
});
