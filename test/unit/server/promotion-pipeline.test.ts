import { describe, expect, it } from 'vitest';
import {
  buildPromotionsResponse,
  pipelineOrder,
  unsettledPullRequests,
} from '../../../src/server/dashboard/promotion-pipeline.ts';
import type { RolloutSummary } from '../../../src/server/dashboard/rollout-summary.ts';

describe('pipelineOrder', () => {
  const rows: Array<{ name: string; sources: string[]; edges: Array<[string, string]>; want: string[] }> = [
    {
      name: 'configured backwards',
      sources: ['prod', 'staging'],
      edges: [['staging', 'prod']],
      want: ['staging', 'prod'],
    },
    {
      name: 'three stages configured out of order',
      sources: ['prod', 'dev', 'staging'],
      edges: [
        ['staging', 'prod'],
        ['dev', 'staging'],
      ],
      want: ['dev', 'staging', 'prod'],
    },
    {
      name: 'a source no promotion names goes last',
      sources: ['tools', 'prod', 'staging'],
      edges: [['staging', 'prod']],
      want: ['staging', 'prod', 'tools'],
    },
    {
      name: 'a cycle keeps the configured order instead of looping',
      sources: ['a', 'b'],
      edges: [
        ['a', 'b'],
        ['b', 'a'],
      ],
      want: ['a', 'b'],
    },
    { name: 'no promotions', sources: ['x', 'y'], edges: [], want: ['x', 'y'] },
  ];
  for (const row of rows)
    it(row.name, () => {
      expect(
        pipelineOrder(
          row.sources,
          row.edges.map(([from, to]) => ({ from, to })),
        ),
      ).toEqual(row.want);
    });
});

function summary(name: string, source: string): RolloutSummary {
  return {
    namespace: source,
    name,
    group: 'rollgate.dev',
    strategy: 'Canary',
    status: 'Healthy',
    health: 'healthy',
    step: '4/4',
    setWeight: '100',
    ready: 2,
    desired: 2,
    upToDate: 2,
    available: 2,
    paused: false,
    aborted: false,
    images: { stable: [`app:${source}`], canary: [] },
    source,
    commit: `${source}-commit`,
  };
}

describe('buildPromotionsResponse', () => {
  it('puts each environment in pipeline order with what it runs, its sync, and the newest history first', () => {
    const response = buildPromotionsResponse({
      sources: [
        { name: 'prod', branch: 'main', path: 'envs/prod', namespace: 'prod' },
        { name: 'staging', branch: 'main', path: 'envs/staging', namespace: 'staging' },
      ],
      promotions: [{ name: 'staging-to-prod', from: 'staging', to: 'prod' }],
      summaries: [summary('web', 'staging'), summary('web', 'prod'), summary('other', 'elsewhere')],
      sourceStates: {
        staging: {
          commit: 'abc123',
          status: {
            phase: 'Synced',
            message: 'applied 1 object',
            commit: 'abc123',
            lastAttemptAt: '2026-01-01T00:00:00Z',
            lastSyncedAt: '2026-01-01T00:00:00Z',
          },
        },
      },
      looks: {
        'staging-to-prod': [
          {
            rollout: 'staging/web',
            promotable: true,
            reason: 'ok',
            pullRequest: { number: 7, url: 'u', title: 't', headSha: 's', checks: 'pending' },
          },
        ],
      },
      history: [
        {
          promotion: 'staging-to-prod',
          rollout: 'staging/web',
          event: 'opened',
          pullRequest: { number: 6 },
          at: '2026-01-01T00:00:00Z',
        },
        {
          promotion: 'staging-to-prod',
          rollout: 'staging/web',
          event: 'merged',
          pullRequest: { number: 6 },
          at: '2026-01-02T00:00:00Z',
        },
      ],
    });
    expect(response.environments.map((e) => e.source)).toEqual(['staging', 'prod']);
    expect(response.environments[0]).toMatchObject({
      commit: 'abc123',
      syncPhase: 'Synced',
      syncedAt: '2026-01-01T00:00:00Z',
    });
    expect(response.environments[0]?.rollouts.map((r) => `${r.namespace}/${r.name}`)).toEqual([
      'staging/web',
    ]);
    expect(response.environments[1]?.commit).toBeUndefined();
    expect(response.promotions[0]?.looks[0]?.pullRequest?.number).toBe(7);
    expect(response.history.map((h) => h.event)).toEqual(['merged', 'opened']);
  });
});

describe('unsettledPullRequests', () => {
  const at = (minute: number): string => `2026-01-01T00:${String(minute).padStart(2, '0')}:00Z`;
  const entry = (number: number, event: 'opened' | 'merged' | 'closed', minute: number) => ({
    promotion: 'p',
    rollout: 'staging/web',
    event,
    pullRequest: { number, url: `u/${number}` },
    at: at(minute),
  });

  it('asks only about pull requests last seen opened and no longer open, newest first', () => {
    const history = [
      entry(1, 'opened', 1),
      entry(1, 'merged', 2), // merged by Rollgate: settled
      entry(2, 'opened', 3), // still open
      entry(3, 'opened', 4), // merged by a person: unsettled
      entry(4, 'opened', 5),
      entry(4, 'closed', 6),
      entry(4, 'opened', 7), // reopened, then gone again: unsettled
    ];
    expect(unsettledPullRequests(history, [{ promotion: 'p', number: 2 }]).map((p) => p.number)).toEqual([
      4, 3,
    ]);
  });

  it('a pull request of another promotion with the same number is another pull request', () => {
    expect(unsettledPullRequests([entry(5, 'opened', 1)], [{ promotion: 'q', number: 5 }])).toHaveLength(1);
  });
});
