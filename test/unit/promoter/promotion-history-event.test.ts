import { describe, expect, it } from 'vitest';
import {
  promotionHistoryEvent,
  readPromotionHistoryEvent,
} from '../../../src/promoter/promotion-history-event.ts';

describe('promotion history events', () => {
  it('reads back what it wrote, with and without a link', () => {
    const merged = promotionHistoryEvent('staging-to-prod', 'merged', {
      number: 12,
      url: 'https://forge/pr/12',
    });
    expect(merged.message).toBe('promotion staging-to-prod: pull request #12 merged https://forge/pr/12');
    expect(
      readPromotionHistoryEvent({ ...merged, rollout: 'staging/web', at: '2026-01-01T00:00:00.000Z' }),
    ).toEqual({
      promotion: 'staging-to-prod',
      rollout: 'staging/web',
      event: 'merged',
      pullRequest: { number: 12, url: 'https://forge/pr/12' },
      at: '2026-01-01T00:00:00.000Z',
    });
    const closed = promotionHistoryEvent('p', 'closed', { number: 3 });
    expect(readPromotionHistoryEvent({ ...closed, rollout: 'a/b' })?.pullRequest).toEqual({ number: 3 });
  });

  it('ignores Events it did not write, or whose reason and message disagree', () => {
    expect(
      readPromotionHistoryEvent({ reason: 'DashboardAction', message: 'promote', rollout: 'a/b' }),
    ).toBeUndefined();
    const opened = promotionHistoryEvent('p', 'opened', { number: 1 });
    expect(
      readPromotionHistoryEvent({
        reason: 'PromotionPullRequestMerged',
        message: opened.message,
        rollout: 'a/b',
      }),
    ).toBeUndefined();
  });

  it('writes and reads back only http(s) links (issue 26): a forged Event cannot carry a script link', () => {
    const hostile = promotionHistoryEvent('p', 'opened', { number: 5, url: 'javascript:alert(1)' });
    expect(hostile.message).toBe('promotion p: pull request #5 opened');
    for (const link of ['javascript:alert(1)', 'data:text/html,x', '//evil.example/x']) {
      const forged = {
        reason: 'PromotionPullRequestOpened',
        message: `promotion p: pull request #5 opened ${link}`,
      };
      expect(readPromotionHistoryEvent({ ...forged, rollout: 'a/b' })?.pullRequest).toEqual({ number: 5 });
    }
  });
});
