// The promotion planner, one table row per situation a user meets.
import { describe, expect, it } from 'vitest';
import {
  planPromotion,
  promotionBranch,
  type PromotionPlanInput,
} from '../../../src/promotion/plan-promotion.ts';
import type { GitRollout } from '../../../src/promotion/git-rollout.ts';
import type { PromotionRollout } from '../../../src/promotion/promotable-revision.ts';
import { markerLine, readMarker } from '../../../src/promotion/pull-request-text.ts';

const healthy = (hash: string, more: Partial<PromotionRollout> = {}): PromotionRollout => ({
  namespace: 'shop',
  name: 'web',
  steps: 2,
  images: [{ container: 'app', image: `registry.example/web:${hash === 'h2' ? '2.0.0' : '1.0.0'}` }],
  status: { phase: 'Healthy', currentPodHash: hash, stableRS: hash, currentStepIndex: 2 },
  commit: 'c0ffee',
  runs: [{ podTemplateHash: hash, phase: 'Successful' }],
  ...more,
});
const promotion = {
  name: 'staging-to-prod',
  fromSource: 'staging',
  toSource: 'prod',
  autoMerge: false,
  checksIntervalMs: 30_000,
};
const edits = [{ path: 'envs/prod/web.yaml', text: 'image: registry.example/web:2.0.0\n' }];
const prFor = (revision: string, more: Partial<{ body: string }> = {}) => ({
  number: 7,
  url: 'http://forge/pr/7',
  headSha: 'abc123',
  body: `…\n${markerLine({ promotion: 'staging-to-prod', rollout: 'shop/web', revision })}`,
  ...more,
});
/** Git holds exactly the live template: its hash is the revision's, its images the live ones. */
const gitOf = (rollout: PromotionRollout): Extract<GitRollout, { found: true }> => ({
  found: true,
  commit: 'c0ffee',
  images: rollout.images,
  podTemplateHash: rollout.status.currentPodHash ?? '',
});
const input = (more: Partial<PromotionPlanInput>): PromotionPlanInput => {
  const rollout = more.rollout ?? healthy('h2');
  return {
    promotion,
    rollout,
    git: gitOf(rollout),
    evidence: { steps: ['setWeight 50', 'pause'], analysis: [{ name: 'web-h2-1', phase: 'Successful' }] },
    targetEdits: edits,
    ...more,
  };
};
const kinds = (plan: ReturnType<typeof planPromotion>) => plan.actions.map((a) => a.kind);

describe('planPromotion', () => {
  it('a revision that finished a healthy canary: push the branch and open one pull request', () => {
    const plan = planPromotion(input({}));
    expect(kinds(plan)).toEqual(['pushBranch', 'openPullRequest']);
    expect(plan.state).toBe('open');
    const [push, open] = plan.actions;
    expect(push).toMatchObject({ branch: 'rollgate/promote/staging-to-prod/web', files: edits });
    expect(open).toMatchObject({
      head: promotionBranch('staging-to-prod', 'web'),
      title: 'Promote web to 2.0.0',
    });
    const body = open?.kind === 'openPullRequest' ? open.body : '';
    expect(body).toContain('c0ffee');
    expect(body).toContain('`setWeight 50` → `pause`');
    expect(body).toContain('web-h2-1 Successful');
    expect(readMarker(body)).toEqual({ promotion: 'staging-to-prod', rollout: 'shop/web', revision: 'h2' });
  });

  it('the open pull request already promotes this revision: nothing to do', () => {
    const plan = planPromotion(input({ pullRequest: prFor('h2') }));
    expect(plan.actions).toEqual([]);
    expect(plan.state).toBe('open');
  });

  it('a newer healthy revision supersedes: branch force-updated, title and body edited, a comment says so', () => {
    const plan = planPromotion(input({ pullRequest: prFor('h1') }));
    expect(kinds(plan)).toEqual(['pushBranch', 'updatePullRequest', 'commentPullRequest']);
    expect(plan.state).toBe('superseded');
    const update = plan.actions[1];
    expect(update?.kind === 'updatePullRequest' && readMarker(update.body)?.revision).toBe('h2');
  });

  it.each([
    ['still progressing', { phase: 'Progressing' as const, currentStepIndex: 1, stableRS: 'h1' }],
    ['paused at a step', { phase: 'Paused' as const, currentStepIndex: 1, stableRS: 'h1' }],
    ['aborted', { phase: 'Degraded' as const, abort: true, stableRS: 'h1', message: 'RolloutAborted: x' }],
  ])('a revision %s gets no pull request', (_name, status) => {
    const plan = planPromotion(
      input({ rollout: healthy('h2', { status: { currentPodHash: 'h2', ...status } }) }),
    );
    expect(plan.actions).toEqual([]);
  });

  it('a status that does not describe the current spec yet (a new template just synced) is not promoted', () => {
    const stale = healthy('h2', {
      generation: 3,
      status: { ...healthy('h2').status, observedGeneration: '2' },
    });
    expect(planPromotion(input({ rollout: stale })).actions).toEqual([]);
    const current = healthy('h2', {
      generation: 3,
      status: { ...healthy('h2').status, observedGeneration: '3' },
    });
    expect(planPromotion(input({ rollout: current })).actions.map((a) => a.kind)).toEqual([
      'pushBranch',
      'openPullRequest',
    ]);
  });

  it('a revision with an inconclusive or failed AnalysisRun is not promoted, even if Healthy', () => {
    for (const phase of ['Inconclusive', 'Failed', 'Error']) {
      const plan = planPromotion(
        input({ rollout: healthy('h2', { runs: [{ podTemplateHash: 'h2', phase }] }) }),
      );
      expect(plan.actions, phase).toEqual([]);
    }
  });

  it('a newer revision aborts: the open pull request for the last healthy one gets one comment, once', () => {
    const aborted = healthy('h3', {
      status: {
        phase: 'Degraded',
        currentPodHash: 'h3',
        stableRS: 'h2',
        abort: true,
        message: 'RolloutAborted: x',
      },
    });
    const first = planPromotion(input({ rollout: aborted, pullRequest: prFor('h2') }));
    expect(kinds(first)).toEqual(['commentPullRequest', 'updatePullRequest']);
    expect(first.state).toBe('blocked');
    const update = first.actions[1];
    const body = update?.kind === 'updatePullRequest' ? update.body : '';
    expect(readMarker(body)).toMatchObject({ revision: 'h2', abortedAfter: 'h3' });
    const again = planPromotion(input({ rollout: aborted, pullRequest: prFor('h2', { body }) }));
    expect(again.actions).toEqual([]);
  });

  it('the target already runs the revision (merged by hand): the open pull request is closed with a comment', () => {
    const plan = planPromotion(input({ targetEdits: [], pullRequest: prFor('h2') }));
    expect(kinds(plan)).toEqual(['closePullRequest']);
    expect(plan.state).toBe('closed');
    expect(planPromotion(input({ targetEdits: [] }))).toMatchObject({ actions: [], state: 'merged' });
  });

  it('auto-merge merges guarded by the head it verified once checks pass, and looks again while they run', () => {
    const auto = { ...promotion, autoMerge: true };
    expect(
      planPromotion(input({ promotion: auto, pullRequest: prFor('h2'), checks: 'success' })).actions,
    ).toEqual([{ kind: 'mergePullRequest', number: 7, sha: 'abc123' }]);
    const pending = planPromotion(input({ promotion: auto, pullRequest: prFor('h2'), checks: 'pending' }));
    expect(pending.actions).toEqual([]);
    expect(pending.requeueAfterMs).toBe(30_000);
    const failed = planPromotion(input({ promotion: auto, pullRequest: prFor('h2'), checks: 'failure' }));
    expect(failed.actions).toEqual([]);
    expect(failed.requeueAfterMs).toBeUndefined();
  });

  it('auto-merge reads the checks of a head it just pushed one interval later, never in the same look', () => {
    const auto = { ...promotion, autoMerge: true, checksIntervalMs: 5_000 };
    const opened = planPromotion(input({ promotion: auto }));
    expect(kinds(opened)).toEqual(['pushBranch', 'openPullRequest']);
    expect(opened.requeueAfterMs).toBe(5_000);
    const superseded = planPromotion(input({ promotion: auto, pullRequest: prFor('h1'), checks: 'success' }));
    expect(kinds(superseded)).toEqual(['pushBranch', 'updatePullRequest', 'commentPullRequest']);
    expect(superseded.requeueAfterMs).toBe(5_000);
    // Without auto-merge nothing needs a second look.
    expect(planPromotion(input({})).requeueAfterMs).toBeUndefined();
  });

  describe('only what Git holds is proposed', () => {
    // `kubectl edit` in staging: the live template (revision h9) runs evil:latest; Git still holds h2's 2.0.0.
    const edited = healthy('h9', {
      images: [{ container: 'app', image: 'evil.example/evil:latest' }],
      commit: 'c0ffee',
    });
    const gitHolds: GitRollout = {
      found: true,
      commit: 'b0a710ad',
      images: [{ container: 'app', image: 'registry.example/web:2.0.0' }],
      podTemplateHash: 'h2',
    };

    it('a healthy revision changed in the cluster is refused, with the images of both sides', () => {
      const plan = planPromotion(input({ rollout: edited, git: gitHolds }));
      expect(plan.actions).toEqual([]);
      expect(plan.state).toBe('refused');
      expect(plan.refusal).toBe(
        'revision h9 of shop/web is not what Git holds at b0a710ad (the cluster runs app=evil.example/evil:latest, Git has app=registry.example/web:2.0.0): changed in the cluster, or Git moved on and is not synced yet; not promoted',
      );
    });

    it('refused with an open pull request and auto-merge: not superseded, not merged', () => {
      const auto = { ...promotion, autoMerge: true };
      for (const pullRequest of [prFor('h2'), prFor('h1')]) {
        const plan = planPromotion(
          input({ promotion: auto, rollout: edited, git: gitHolds, pullRequest, checks: 'success' }),
        );
        expect(plan.actions).toEqual([]);
        expect(plan.state).toBe('refused');
      }
    });

    it('a template changed in a field other than the image is refused too', () => {
      const plan = planPromotion(
        input({ rollout: healthy('h9', { images: gitHolds.found ? gitHolds.images : [] }), git: gitHolds }),
      );
      expect(plan.refusal).toContain("Git's template is revision h2");
    });

    it('Git not read, or without the Rollout: nothing is proposed', () => {
      expect(planPromotion(input({ git: undefined }))).toMatchObject({
        actions: [],
        state: 'refused',
        refusal: 'the manifest of shop/web in Git was not read',
      });
      const missing = planPromotion(
        input({ git: { found: false, commit: 'b0a710ad', reason: 'no Rollout web under the source path' } }),
      );
      expect(missing.actions).toEqual([]);
      expect(missing.refusal).toBe(
        'Git has no usable manifest of shop/web at b0a710ad: no Rollout web under the source path',
      );
    });

    it("the images and commit proposed are Git's", () => {
      const plan = planPromotion(input({ git: { ...gitOf(healthy('h2')), commit: 'b0a710ad' } }));
      const open = plan.actions[1];
      expect(open?.kind === 'openPullRequest' && open.body).toContain('Source commit: `b0a710ad`');
    });

    it("a revision adopted from Argo Rollouts (Argo's hash) is promoted when its template is Git's", () => {
      // The live template is revision 5f7b9c6d48 (the ReplicaSet Argo left); hashed as Git's it is h2.
      const images = [{ container: 'app', image: 'registry.example/web:2.0.0' }];
      const adopted = healthy('5f7b9c6d48', { images, templateHash: '5f7b9c6d48', specHash: 'h2' });
      expect(planPromotion(input({ rollout: adopted, git: gitHolds })).state).toBe('open');
      // Git holds another template: refused as any other.
      const elsewhere = healthy('5f7b9c6d48', { images, templateHash: '5f7b9c6d48', specHash: 'h9' });
      expect(planPromotion(input({ rollout: elsewhere, git: gitHolds })).refusal).toContain(
        "Git's template is revision h2",
      );
      // The live template moved on since the adopted revision finished: not that revision any more.
      const movedOn = healthy('5f7b9c6d48', { images, templateHash: 'h2', specHash: 'h2' });
      expect(planPromotion(input({ rollout: movedOn, git: gitHolds })).state).toBe('refused');
    });

    it('workloadRef: the live Deployment template must be the revision and carry the images Git has', () => {
      const viaRef = (more: Partial<PromotionRollout>) =>
        healthy('h2', { workloadRef: true, templateHash: 'h2', ...more });
      // The API server fills defaults into a Deployment: Git's template never hashes like the live one.
      const defaulted: GitRollout = { ...gitOf(healthy('h2')), podTemplateHash: 'other' };
      expect(planPromotion(input({ rollout: viaRef({}), git: defaulted })).state).toBe('open');
      const evil = viaRef({ images: [{ container: 'app', image: 'evil.example/evil:latest' }] });
      expect(planPromotion(input({ rollout: evil, git: defaulted })).state).toBe('refused');
      const movedOn = viaRef({ templateHash: 'h7' });
      expect(planPromotion(input({ rollout: movedOn, git: defaulted })).refusal).toContain(
        'its Deployment changed since the canary finished',
      );
    });
  });
});

describe('planPromotion: the target with the edit does not render', () => {
  const problems = [
    {
      file: 'apps/web/overlays/prod/kustomization.yaml',
      line: 1,
      message: 'kustomize build apps/web/overlays/prod: accumulating resources: missing.yaml: no such file',
    },
    { file: 'apps/api/overlays/prod/kustomization.yaml', line: 4, message: 'remote base' },
  ];

  it('refuses with the first problem in full and nothing pushed or opened', () => {
    const plan = planPromotion(input({ targetRenderProblems: problems }));
    expect(plan.actions).toEqual([]);
    expect(plan.state).toBe('refused');
    expect(plan.refusalKind).toBe('does-not-render');
    expect(plan.refusal).toBe(
      'revision h2 is not promoted: prod with the image edit does not render: apps/web/overlays/prod/kustomization.yaml:1: kustomize build apps/web/overlays/prod: accumulating resources: missing.yaml: no such file (and 1 more)',
    );
  });

  it('an open pull request (for an earlier revision) is neither superseded nor merged', () => {
    const plan = planPromotion(
      input({
        promotion: { ...promotion, autoMerge: true },
        pullRequest: prFor('h1'),
        checks: 'success',
        targetRenderProblems: problems,
      }),
    );
    expect(plan.actions).toEqual([]);
    expect(plan.state).toBe('refused');
  });

  it('no edit (the target runs the revision): nothing was rendered, nothing refused', () => {
    const plan = planPromotion(input({ targetEdits: [], targetRenderProblems: [] }));
    expect(plan.state).toBe('merged');
  });
});
