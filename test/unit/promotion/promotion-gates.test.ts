// Promotion gates: the soak before a pull request, and what auto-merge waits for (approval, merge windows).
import { describe, expect, it } from 'vitest';
import { planPromotion, type PromotionPlanInput } from '../../../src/promotion/plan-promotion.ts';
import type { GitRollout } from '../../../src/promotion/git-rollout.ts';
import type { PromotionRollout } from '../../../src/promotion/promotable-revision.ts';
import { markerLine, readMarker } from '../../../src/promotion/pull-request-text.ts';
import { mergeGateVerdict, type PromotionGates } from '../../../src/promotion/promotion-gates.ts';
import { windowVerdict, type MergeWindow } from '../../../src/promotion/merge-window.ts';
import { scheduleProblem } from '../../../src/config/cron-schedule.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';
import { buildPromotions } from '../../../src/promoter/build-promotions.ts';
import { silentLogger } from '../../../src/log/logger.ts';

const HOUR = 3_600_000;
/** Healthy revision h2 whose Healthy condition turned True at `since`. */
const healthy = (since: string | null): PromotionRollout => ({
  namespace: 'shop',
  name: 'web',
  steps: 2,
  images: [{ container: 'app', image: 'registry.example/web:2.0.0' }],
  status: {
    phase: 'Healthy',
    currentPodHash: 'h2',
    stableRS: 'h2',
    currentStepIndex: 2,
    ...(since !== null
      ? {
          conditions: [
            { type: 'Healthy', status: 'True', reason: 'RolloutHealthy', lastTransitionTime: since },
          ],
        }
      : {}),
  },
  commit: 'c0ffee',
  runs: [],
});
const gitOf = (rollout: PromotionRollout): GitRollout => ({
  found: true,
  commit: 'c0ffee',
  images: rollout.images,
  podTemplateHash: 'h2',
});
const promotion = {
  name: 'staging-to-prod',
  fromSource: 'staging',
  toSource: 'prod',
  autoMerge: true,
  checksIntervalMs: 30_000,
};
const prFor = (revision: string, labels: string[] = [], gateNote?: string) => ({
  number: 7,
  url: 'http://forge/pr/7',
  headSha: 'abc123',
  labels,
  body: `…\n${markerLine({ promotion: 'staging-to-prod', rollout: 'shop/web', revision, ...(gateNote ? { gateNote } : {}) })}`,
});
const input = (
  gates: PromotionGates,
  now: string,
  more: Partial<PromotionPlanInput> = {},
  since: string | null = '2026-12-04T10:00:00Z',
): PromotionPlanInput => {
  const rollout = healthy(since);
  return {
    promotion,
    rollout,
    git: gitOf(rollout),
    evidence: { steps: [], analysis: [] },
    targetEdits: [{ path: 'envs/prod/web.yaml', text: 'image: registry.example/web:2.0.0\n' }],
    gating: { gates, now: new Date(now) },
    ...more,
  };
};
const kinds = (plan: ReturnType<typeof planPromotion>) => plan.actions.map((a) => a.kind);
/** Weekend freeze: from Friday 17:00 to Monday 09:00, Paris time. */
const weekendFreeze: MergeWindow = {
  kind: 'deny',
  schedule: '0 17 * * 5',
  durationMs: 64 * HOUR,
  timeZone: 'Europe/Paris',
};

describe('soak', () => {
  const gates = { soakMs: 10 * 60_000 };

  it('not yet elapsed: no pull request, and the next look when it will have', () => {
    const plan = planPromotion(input(gates, '2026-12-04T10:04:00Z'));
    expect(plan.actions).toEqual([]);
    expect(plan.state).toBe('waiting');
    expect(plan.requeueAfterMs).toBe(6 * 60_000);
    expect(plan.requeueReason).toBe('soak');
    expect(plan.summary).toContain('pull request at 2026-12-04T10:10:00.000Z');
  });

  it('elapsed: the pull request is opened', () => {
    expect(kinds(planPromotion(input(gates, '2026-12-04T10:10:00Z')))).toEqual([
      'pushBranch',
      'openPullRequest',
    ]);
  });

  it('a degradation restarts it: the Healthy condition turned True again later counts from then', () => {
    const plan = planPromotion(input(gates, '2026-12-04T10:12:00Z', {}, '2026-12-04T10:11:00Z'));
    expect(plan.actions).toEqual([]);
    expect(plan.requeueAfterMs).toBe(9 * 60_000);
  });

  it('no Healthy condition time: waits a whole soak rather than guess', () => {
    const plan = planPromotion(input(gates, '2026-12-04T10:12:00Z', {}, null));
    expect(plan.actions).toEqual([]);
    expect(plan.requeueAfterMs).toBe(10 * 60_000);
  });

  it('a newer revision soaks before it supersedes; the pull request of this revision is not held again', () => {
    const soaking = planPromotion(input(gates, '2026-12-04T10:04:00Z', { pullRequest: prFor('h1') }));
    expect(soaking.actions).toEqual([]);
    expect(soaking.state).toBe('open');
    const opened = planPromotion(
      input(gates, '2026-12-04T10:04:00Z', { pullRequest: prFor('h2'), checks: 'success' }),
    );
    expect(kinds(opened)).toEqual(['mergePullRequest']);
  });
});

describe('approval', () => {
  const gates = { requireApproval: { label: 'approved' } };

  it('missing: no merge, told once on the pull request, read again every checks interval', () => {
    const plan = planPromotion(
      input(gates, '2026-12-04T12:00:00Z', { pullRequest: prFor('h2'), checks: 'success' }),
    );
    expect(kinds(plan)).toEqual(['commentPullRequest', 'updatePullRequest']);
    const [comment, update] = plan.actions;
    expect(comment).toMatchObject({ body: expect.stringContaining('add the label `approved`') });
    const body = update?.kind === 'updatePullRequest' ? update.body : '';
    expect(readMarker(body)?.gateNote).toBe('approval:approved');
    expect(plan.requeueAfterMs).toBe(30_000);
    expect(plan.gate).toBe('waits for the approval label "approved"');
    // The next look finds the note in the marker: nothing more is written.
    const again = planPromotion(
      input(gates, '2026-12-04T12:00:30Z', {
        pullRequest: prFor('h2', [], 'approval:approved'),
        checks: 'success',
      }),
    );
    expect(again.actions).toEqual([]);
  });

  it('given: merges once the checks pass', () => {
    const plan = planPromotion(
      input(gates, '2026-12-04T12:00:00Z', { pullRequest: prFor('h2', ['approved']), checks: 'success' }),
    );
    expect(plan.actions).toEqual([{ kind: 'mergePullRequest', number: 7, sha: 'abc123' }]);
  });
});

describe('approval by review', () => {
  const withReviews = (approvedBy: string[] | undefined, labels: string[] = [], gateNote?: string) => ({
    ...prFor('h2', labels, gateNote),
    ...(approvedBy !== undefined ? { approvedBy } : {}),
  });
  const rows: Array<{
    name: string;
    gates: PromotionGates;
    labels?: string[];
    approvedBy?: string[];
    wantMerge: boolean;
    wantGate?: string;
  }> = [
    {
      name: 'no approving review: waits',
      gates: { requireApproval: { review: true } },
      approvedBy: [],
      wantMerge: false,
      wantGate: 'waits for an approving review',
    },
    {
      name: 'reviews not read (absent) count as none',
      gates: { requireApproval: { review: true } },
      wantMerge: false,
      wantGate: 'waits for an approving review',
    },
    {
      name: 'one approving review: merges',
      gates: { requireApproval: { review: true } },
      approvedBy: ['ana'],
      wantMerge: true,
    },
    {
      name: 'label and review: the label alone is not enough',
      gates: { requireApproval: { label: 'approved', review: true } },
      labels: ['approved'],
      approvedBy: [],
      wantMerge: false,
      wantGate: 'waits for an approving review',
    },
    {
      name: 'label and review: the review alone is not enough',
      gates: { requireApproval: { label: 'approved', review: true } },
      approvedBy: ['ana'],
      wantMerge: false,
      wantGate: 'waits for the approval label "approved"',
    },
    {
      name: 'label and review: both given, merges',
      gates: { requireApproval: { label: 'approved', review: true } },
      labels: ['approved'],
      approvedBy: ['ana'],
      wantMerge: true,
    },
  ];
  it.each(rows)('$name', ({ gates, labels, approvedBy, wantMerge, wantGate }) => {
    const plan = planPromotion(
      input(gates, '2026-12-04T12:00:00Z', {
        pullRequest: withReviews(approvedBy, labels),
        checks: 'success',
      }),
    );
    expect(plan.actions.some((a) => a.kind === 'mergePullRequest')).toBe(wantMerge);
    expect(plan.gate).toBe(wantGate);
    if (!wantMerge) expect(plan.requeueReason).toBe('approval');
  });

  it('the wait for a review is told once on the pull request', () => {
    const gates = { requireApproval: { review: true } };
    const first = planPromotion(
      input(gates, '2026-12-04T12:00:00Z', { pullRequest: withReviews([]), checks: 'success' }),
    );
    expect(first.actions[0]).toMatchObject({
      body: expect.stringContaining('approve this pull request in a review'),
    });
    const again = planPromotion(
      input(gates, '2026-12-04T12:00:30Z', {
        pullRequest: withReviews([], [], 'approval:review'),
        checks: 'success',
      }),
    );
    expect(again.actions).toEqual([]);
  });
});

describe('merge windows', () => {
  it('inside a deny window: no merge, the comment says why and when, next look when it closes', () => {
    const plan = planPromotion(
      input({ windows: [weekendFreeze] }, '2026-12-05T10:00:00Z', {
        pullRequest: prFor('h2'),
        checks: 'success',
      }),
    );
    expect(kinds(plan)).toEqual(['commentPullRequest', 'updatePullRequest']);
    const body = plan.actions[0]?.kind === 'commentPullRequest' ? plan.actions[0].body : '';
    expect(body).toContain('inside the deny window "0 17 * * 5" (64h, Europe/Paris)');
    expect(body).toContain('it will merge from 2026-12-07 09:00 Europe/Paris (2026-12-07T08:00:00.000Z)');
    expect(plan.requeueAfterMs).toBe(Date.parse('2026-12-07T08:00:00Z') - Date.parse('2026-12-05T10:00:00Z'));
    expect(plan.requeueReason).toBe('merge window');
  });

  it('outside it: merges', () => {
    const plan = planPromotion(
      input({ windows: [weekendFreeze] }, '2026-12-07T08:00:00Z', {
        pullRequest: prFor('h2'),
        checks: 'success',
      }),
    );
    expect(kinds(plan)).toEqual(['mergePullRequest']);
  });

  it('allow windows: merges only inside one; deny wins over allow', () => {
    const office: MergeWindow = {
      kind: 'allow',
      schedule: '0 9 * * 1-5',
      durationMs: 8 * HOUR,
      timeZone: 'Europe/Paris',
    };
    // Thursday 20:00 Paris: outside; opens Friday 09:00 Paris.
    const evening = windowVerdict([office], new Date('2026-12-03T19:00:00Z'));
    expect(evening).toMatchObject({ open: false, opensAt: new Date('2026-12-04T08:00:00Z') });
    expect(windowVerdict([office], new Date('2026-12-03T10:00:00Z'))).toEqual({ open: true });
    // Friday 16:30 Paris is inside office hours, but Friday 17:00 starts the freeze: Monday 09:00 it is.
    const friday = windowVerdict([office, weekendFreeze], new Date('2026-12-04T16:30:00Z'));
    expect(friday).toMatchObject({ open: false, opensAt: new Date('2026-12-07T08:00:00Z') });
    expect(windowVerdict([office, weekendFreeze], new Date('2026-12-04T15:30:00Z'))).toEqual({ open: true });
  });

  it('overlapping occurrences of one window count as one', () => {
    const daily: MergeWindow = { kind: 'deny', schedule: '0 0 * * *', durationMs: 36 * HOUR };
    expect(windowVerdict([daily], new Date('2026-12-04T12:00:00Z'))).toMatchObject({ open: false });
    // Every day reopens it before it closes: it never opens (looked for up to the horizon, then given up).
    const never = windowVerdict([daily], new Date('2026-12-04T12:00:00Z'));
    expect(never).toEqual({ open: false, reason: expect.stringContaining('deny window "0 0 * * *"') });
    // Auto-merge says so and looks again in an hour rather than every checks interval.
    expect(
      mergeGateVerdict({ windows: [daily] }, { labels: [] }, new Date('2026-12-04T12:00:00Z')),
    ).toMatchObject({
      allowed: false,
      note: expect.stringContaining('no allowed moment was found'),
      retryAfterMs: HOUR,
    });
    // Two days a week with 30 h: Monday 00:00 to Wednesday 06:00 is one stretch.
    const twice: MergeWindow = { kind: 'deny', schedule: '0 0 * * 1,2', durationMs: 30 * HOUR };
    expect(windowVerdict([twice], new Date('2026-12-07T12:00:00Z'))).toMatchObject({
      opensAt: new Date('2026-12-09T06:00:00Z'),
    });
  });

  it('the approval is asked before the window is explained', () => {
    const plan = planPromotion(
      input({ windows: [weekendFreeze], requireApproval: { label: 'approved' } }, '2026-12-05T10:00:00Z', {
        pullRequest: prFor('h2'),
        checks: 'success',
      }),
    );
    expect(plan.gate).toContain('approval');
  });
});

describe('gates configuration', () => {
  it('schedules and time zones are checked', () => {
    expect(scheduleProblem('0 17 * *', undefined)).toMatch(/five fields/);
    expect(scheduleProblem('0 25 * * *', undefined)).toMatch(/not a cron schedule/);
    expect(scheduleProblem('0 17 * * 5', 'Mars/Olympus')).toMatch(/not a time zone/);
    expect(scheduleProblem('0 17 * * 5', 'Europe/Paris')).toBeUndefined();
  });

  const configWith = (pullRequestMore: string, gates: string[]) => {
    const file = join(mkdtempSync(join(tmpdir(), 'rollgate-gates-')), 'rollgate.yaml');
    writeFileSync(
      file,
      [
        'sources:',
        '  - { name: staging, url: http://git.example/a.git, path: envs/staging }',
        '  - { name: prod, url: http://git.example/a.git, path: envs/prod }',
        'promotions:',
        '  - name: staging-to-prod',
        '    from: { source: staging }',
        '    to: { source: prod }',
        `    pullRequest: { provider: github, apiUrl: https://api.github.com, repository: a/b, token: forge-token-0123456789${pullRequestMore} }`,
        '    gates:',
        ...gates.map((line) => `      ${line}`),
      ].join('\n'),
    );
    return () => loadConfig({ file, env: {} });
  };
  const problemsOf = (load: () => unknown): string => {
    try {
      load();
    } catch (error) {
      if (error instanceof ConfigError)
        return error.problems.map((p) => `${p.path}: ${p.message}`).join('\n');
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it('refuses an approval label on Bitbucket, which has no labels', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rollgate-gates-')), 'rollgate.yaml');
    writeFileSync(
      file,
      [
        'sources: [{ name: a, url: http://h/a.git }, { name: b, url: http://h/b.git }]',
        'promotions:',
        '  - { name: p, from: { source: a }, to: { source: b }, gates: { requireApproval: { label: ok } },',
        '      pullRequest: { provider: bitbucket-cloud, apiUrl: https://api.bitbucket.org/2.0, repository: w/r,',
        '        token: forge-token-0123456789, autoMerge: true } }',
      ].join('\n'),
    );
    expect(problemsOf(() => loadConfig({ file, env: {} }))).toMatch(
      /promotions\[0\]\.gates\.requireApproval\.label: Bitbucket pull requests have no labels/,
    );
  });

  it('reads soak, windows and approval into the promotion, durations in milliseconds', () => {
    const config = configWith(', autoMerge: true', [
      'soak: 10m',
      'windows: [{ kind: deny, schedule: "0 17 * * 5", duration: 64h, timeZone: Europe/Paris }]',
      'requireApproval: { label: approved }',
    ])();
    const [built] = buildPromotions(config, { logger: silentLogger, env: {} });
    expect(built?.spec.gates).toEqual({
      soakMs: 600_000,
      windows: [weekendFreeze],
      requireApproval: { label: 'approved' },
    });
  });

  it('refuses bad gates naming the key', () => {
    const problems = problemsOf(
      configWith('', [
        'soak: soon',
        'windows:',
        '  - { kind: deny, schedule: "0 17 * *", duration: 1h }',
        '  - { kind: maybe, schedule: "0 17 * * 5", duration: 1h, timeZone: Mars/Olympus }',
        'requireApproval: { label: approved }',
      ]),
    );
    expect(problems).toMatch(/promotions\[0\]\.gates\.soak: must be a duration/);
    expect(problems).toMatch(
      /promotions\[0\]\.gates\.windows\[0\]\.schedule: "0 17 \* \*" must have five fields/,
    );
    expect(problems).toMatch(/promotions\[0\]\.gates\.windows\[1\]\.kind/);
    // Without auto-merge there is nothing for an approval to gate.
    expect(problemsOf(configWith('', ['requireApproval: { label: approved }']))).toMatch(
      /promotions\[0\]\.gates\.requireApproval: gates\.requireApproval gates auto-merge: set pullRequest\.autoMerge: true/,
    );
    expect(
      problemsOf(
        configWith(', autoMerge: true', [
          'windows: [{ kind: deny, schedule: "0 17 * * 5", duration: 1h, timeZone: Mars/Olympus }]',
        ]),
      ),
    ).toMatch(/promotions\[0\]\.gates\.windows\[0\]\.timeZone: "Mars\/Olympus" is not a time zone/);
  });

  it('config: review: true is accepted on Bitbucket; an empty requireApproval is refused', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rollgate-gates-')), 'rollgate.yaml');
    const config = (approval: string) => {
      writeFileSync(
        file,
        [
          'sources: [{ name: a, url: http://h/a.git }, { name: b, url: http://h/b.git }]',
          'promotions:',
          `  - { name: p, from: { source: a }, to: { source: b }, gates: { requireApproval: ${approval} },`,
          '      pullRequest: { provider: bitbucket-cloud, apiUrl: https://api.bitbucket.org/2.0, repository: w/r,',
          '        token: forge-token-0123456789, autoMerge: true } }',
        ].join('\n'),
      );
      return () => loadConfig({ file, env: {} });
    };
    expect(config('{ review: true }')().promotions[0]?.gates?.requireApproval).toEqual({ review: true });
    expect(problemsOf(config('{}'))).toMatch(
      /promotions\[0\]\.gates\.requireApproval: give label, review: true, or both/,
    );
  });
});
