// The release planner: several Rollouts and the files as one pull request, only when every one finished healthy.
import { describe, expect, it } from 'vitest';
import { planRelease, releaseBranch, type ReleasePlanInput } from '../../../src/promotion/plan-release.ts';
import type { PromotionRollout } from '../../../src/promotion/promotable-revision.ts';
import { markerLine, readMarker } from '../../../src/promotion/pull-request-text.ts';

const rolloutOf = (
  name: string,
  hash: string,
  more: Partial<PromotionRollout['status']> = {},
): PromotionRollout => ({
  namespace: 'shop',
  name,
  steps: 1,
  images: [{ container: 'app', image: `registry.example/${name}:${hash}` }],
  status: { phase: 'Healthy', currentPodHash: hash, stableRS: hash, currentStepIndex: 1, ...more },
  commit: 'c1',
  runs: [],
});
const member = (
  name: string,
  hash: string,
  more: Partial<PromotionRollout['status']> = {},
  commit = 'c1',
) => {
  const rollout = rolloutOf(name, hash, more);
  return {
    name,
    read: {
      rollout,
      git: { found: true as const, commit, images: rollout.images, podTemplateHash: hash },
      targetImages: [{ container: 'app', image: `registry.example/${name}:old` }],
    },
  };
};
const promotion = {
  name: 'shop',
  fromSource: 'staging',
  toSource: 'prod',
  autoMerge: false,
  checksIntervalMs: 30_000,
};
const edits = [
  { path: 'envs/prod/web.yaml', text: 'web' },
  { path: 'envs/prod/api.yaml', text: 'api' },
  { path: 'envs/prod/config/shop.yaml', text: 'config' },
];
const files = { edits: [{ path: 'config/shop.yaml', change: 'modified' as const }], digest: 'd1' };
const input = (more: Partial<ReleasePlanInput>): ReleasePlanInput => ({
  promotion,
  namespace: 'shop',
  members: [member('web', 'w2'), member('api', 'a2')],
  targetEdits: edits,
  files,
  ...more,
});
const prFor = (revision: string, digest = 'd1') => ({
  number: 9,
  url: 'http://forge/pr/9',
  headSha: 'head',
  body: `…\n${markerLine({ promotion: 'shop', rollout: 'shop/shop', revision, files: digest })}`,
});
const kinds = (plan: ReturnType<typeof planRelease>) => plan.actions.map((a) => a.kind);

describe('planRelease', () => {
  it('waits, pushing nothing, while any Rollout of the release has not finished', () => {
    const plan = planRelease(
      input({ members: [member('web', 'w2'), member('api', 'a2', { phase: 'Progressing' })] }),
    );
    expect(plan).toMatchObject({ actions: [], state: 'waiting' });
    expect(plan.summary).toContain('api: revision a2 is Progressing');
    expect(planRelease(input({ members: [member('web', 'w2'), { name: 'api' }] })).summary).toContain(
      'api is not in staging yet',
    );
  });

  it('opens one pull request with every edit once all finished, listing each image change and the files', () => {
    const plan = planRelease(input({ targetDeletions: ['envs/prod/config/old.yaml'] }));
    expect(kinds(plan)).toEqual(['pushBranch', 'openPullRequest']);
    const [push, open] = plan.actions;
    expect(push).toMatchObject({
      branch: releaseBranch('shop'),
      files: edits,
      deletions: ['envs/prod/config/old.yaml'],
    });
    if (open?.kind !== 'openPullRequest') throw new Error('no open');
    expect(open.head).toBe('rollgate/promote/shop/release');
    expect(open.title).toBe('Release web w2, api a2');
    expect(open.body).toContain(
      '| web | `w2` | app: `registry.example/web:old` → `registry.example/web:w2` |',
    );
    expect(open.body).toContain(
      '| api | `a2` | app: `registry.example/api:old` → `registry.example/api:a2` |',
    );
    expect(open.body).toContain('- `config/shop.yaml` modified');
    expect(readMarker(open.body)).toMatchObject({ revision: 'web@w2,api@a2', files: 'd1' });
  });

  it('does nothing more for the pull request that carries this release', () => {
    expect(planRelease(input({ pullRequest: prFor('web@w2,api@a2') }))).toMatchObject({
      actions: [],
      state: 'open',
    });
  });

  it('supersedes when any Rollout moved on, or the files changed', () => {
    expect(kinds(planRelease(input({ pullRequest: prFor('web@w1,api@a2') })))).toEqual([
      'pushBranch',
      'updatePullRequest',
      'commentPullRequest',
    ]);
    const files = planRelease(input({ pullRequest: prFor('web@w2,api@a2', 'd0') }));
    expect(files.state).toBe('superseded');
    expect(files.actions[2]).toMatchObject({
      body: expect.stringContaining('with the files as they are now'),
    });
  });

  it('reports an abort of one Rollout once on the open pull request, and proposes nothing', () => {
    const aborted = input({
      members: [
        member('web', 'w3', { abort: true, phase: 'Degraded', message: 'RolloutAborted: analysis failed' }),
        member('api', 'a2'),
      ],
      pullRequest: prFor('web@w2,api@a2'),
    });
    const plan = planRelease(aborted);
    expect(kinds(plan)).toEqual(['commentPullRequest', 'updatePullRequest']);
    const update = plan.actions[1];
    if (update?.kind !== 'updatePullRequest') throw new Error('no update');
    const again = planRelease({ ...aborted, pullRequest: { ...prFor('web@w2,api@a2'), body: update.body } });
    expect(again).toMatchObject({ actions: [], state: 'open' });
  });

  it('refuses a release whose Rollout is not what Git holds', () => {
    const web = member('web', 'w2');
    web.read.git = { ...web.read.git, podTemplateHash: 'other' };
    expect(planRelease(input({ members: [web, member('api', 'a2')] }))).toMatchObject({
      state: 'refused',
      refusalKind: 'not-in-git',
    });
  });

  it('soaks the release as a whole: the pull request waits for the last Rollout to soak', () => {
    const since = (at: string) => ({
      conditions: [{ type: 'Healthy', status: 'True' as const, lastTransitionTime: at }],
    });
    const plan = planRelease(
      input({
        members: [
          member('web', 'w2', since('2026-01-01T00:00:00Z')),
          member('api', 'a2', since('2026-01-01T00:09:00Z')),
        ],
        gating: { gates: { soakMs: 600_000, windows: [] }, now: new Date('2026-01-01T00:10:00Z') },
      }),
    );
    expect(plan).toMatchObject({
      actions: [],
      state: 'waiting',
      requeueReason: 'soak',
      requeueAfterMs: 540_000,
    });
  });

  it('closes the pull request when the target already holds the release', () => {
    expect(kinds(planRelease(input({ targetEdits: [], pullRequest: prFor('web@w1,api@a1') })))).toEqual([
      'closePullRequest',
    ]);
    expect(planRelease(input({ targetEdits: [] })).state).toBe('merged');
  });
});
