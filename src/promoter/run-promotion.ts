// One look at a promotion for one rollout: read Rollout, target and pull request; plan; act; report a commit status.
import type { Forge, PullRequest } from '../forge/forge.ts';
import { ForgeError } from '../forge/forge-error.ts';
import type { Logger } from '../log/logger.ts';
import type { KubeClients } from '../kube/client.ts';
import { ObservedStateReader, type RolloutKey } from '../reconciler/observed-state-reader.ts';
import type { DrivenApi } from '../manifest/driven-api.ts';
import { planCommitStatus, type PlannedCommitStatus } from '../promotion/commit-status.ts';
import { matchGit, type ContainerImage, type GitRollout } from '../promotion/git-rollout.ts';
import { planPromotion, promotionBranch } from '../promotion/plan-promotion.ts';
import { promotability } from '../promotion/promotable-revision.ts';
import type { PromotionGates } from '../promotion/promotion-gates.ts';
import { POD_TEMPLATE_HASH_LABEL } from '../rollout/index.ts';
import type {
  PromotionAction,
  PromotionFile,
  PromotionPlan,
  TargetRenderProblem,
} from '../promotion/promotion-action.ts';
import { gitRolloutOf, type PromotionSourceRead } from './read-git-rollout.ts';
import { targetEditsOf, type FilesReader, type TargetEdits } from './target-edits.ts';
import type { FileMove } from '../promotion/plan-file-edits.ts';
import { describeSteps, promotionRolloutOf } from './read-promotion-rollout.ts';

/** The promotion as configured, with its forge already built. */
export interface PromotionSpec {
  name: string;
  fromSource: string;
  /** Rollout names this promotion carries; all of the source's when absent. */
  rollouts?: string[];
  toSource: string;
  autoMerge: boolean;
  /** How often auto-merge re-reads the checks of the open pull request. */
  checksIntervalMs: number;
  labels: string[];
  reviewers: string[];
  draft: boolean;
  author: { name: string; email: string };
  /** Soak, merge windows, approval (docs/promotion.md, "Gates"). */
  gates?: PromotionGates;
  /** Files and folders copied from the `from` source to the `to` source with the images (docs/promotion.md, "Files"). */
  files?: FileMove[];
  /** The listed `rollouts` are one release: one pull request for all of them (docs/promotion.md, "Releases"). */
  together?: boolean;
}

/** The target side: its branch, the files under its path, and the branch writer. */
export interface PromotionTarget {
  branch: string;
  /** Fetches the target branch and returns its tip and every manifest file under the source's path. */
  read(): Promise<{ tip: string; files: PromotionFile[] }>;
  /** The target source's path (the moved files' paths are relative to it). */
  root?: string;
  /** Reads any files at or under paths relative to the source's path, at a tip `read` fetched. */
  readFiles?: FilesReader;
  /** Force-updates `branch` to the target tip plus `files` minus `deletions`; pushes nothing when it already holds exactly that. */
  push(request: {
    branch: string;
    files: PromotionFile[];
    deletions?: string[];
    message: string;
    author: { name: string; email: string };
  }): Promise<{ commit: string; pushed: boolean }>;
  /**
   * Renders the target's apps that read one of `files` at `tip` with `files` written over it (nothing
   * pushed) and returns their problems; empty when they render or no app reads them. Absent: no check
   * (a target of plain YAML).
   */
  checkRender?(tip: string, files: readonly PromotionFile[]): Promise<TargetRenderProblem[]>;
}

/** The `from` side: its Git, which a promoted revision must match. */
export interface PromotionSource {
  /**
   * Fetches the source's branch and returns its tip and every manifest file under the source's path, and
   * for a source that renders, its objects as the sync reads them.
   */
  read(): Promise<PromotionSourceRead>;
  /** Reads any files at or under paths relative to the source's path, at a tip `read` fetched. */
  readFiles?: FilesReader;
  /** The source's `namespace` (where its manifests without one are applied). */
  namespace?: string;
}

/** Rewrites the target files to the rollout's images (only the files that change). */
export type ImageEditor = (
  files: readonly PromotionFile[],
  target: { kind: 'Rollout'; name: string; namespace?: string },
  images: ReadonlyArray<{ container: string; image: string }>,
) => PromotionFile[];

export interface PromotionDeps {
  clients: KubeClients;
  /** The group the promotion's Rollouts live in: where the sync applies them (default rollgate.dev). */
  api?: DrivenApi;
  forge: Forge;
  target: PromotionTarget;
  source: PromotionSource;
  editImages: ImageEditor;
  logger: Logger;
  /** The moment of the look, for the gates (the process's clock). Default: the wall clock. */
  now?: () => Date;
  /** Remembers the last status posted per commit and context, so a repeated look posts nothing (lost on restart: harmless). */
  postedStatuses?: Map<string, string>;
  /** Called when a healthy revision is refused because it is not what Git holds (a Warning on the Rollout). */
  onRefused?: (reason: string) => void;
  /**
   * Called when a pull request was opened, merged or closed (metrics, notifications), with its number and
   * the Rollout as read for this look.
   */
  onForge?: (
    what: 'opened' | 'merged' | 'closed',
    detail: { pullRequest: { number: number; url?: string }; rollout: Record<string, unknown> },
  ) => void;
}

export interface PromotionOutcome {
  plan?: PromotionPlan;
  /** The source commit's status, as `state: description` (what was, or in a dry run would be, posted). */
  commitStatus?: string;
  /** The open pull request after the actions (for `rollgate promotions`). */
  pullRequest?: PullRequest;
  skipped?: string;
}

/**
 * Plans and carries out one promotion for one rollout. Reads happen first (Rollout, target files, the
 * open pull request, its checks), the pure planner decides, then the actions run in order. A forge or Git
 * error is thrown typed: transient ones are retried by the queue with backoff, the others (bad token,
 * missing repository) need a human and are reported on the promotion as they are.
 */
export async function runPromotion(
  promotion: PromotionSpec,
  key: RolloutKey,
  deps: PromotionDeps,
  options: { dryRun?: boolean } = {},
): Promise<PromotionOutcome> {
  const log = deps.logger.child({ promotion: promotion.name, rollout: `${key.namespace}/${key.name}` });
  const read = await new ObservedStateReader(deps.clients, undefined, deps.api).read(key);
  if (read === undefined) return { skipped: 'the Rollout is gone' };
  const { rollout, source } = promotionRolloutOf(read);
  if (source !== promotion.fromSource) return { skipped: `the Rollout comes from source "${source}"` };
  if (promotion.rollouts !== undefined && !promotion.rollouts.includes(rollout.name))
    return { skipped: 'the promotion does not carry this Rollout' };

  const branch = promotionBranch(promotion.name, rollout.name);
  let targetEdits: TargetEdits = { files: [], deletions: [] };
  let targetRenderProblems: TargetRenderProblem[] = [];
  let git: GitRollout | undefined;
  const verdict = promotability(rollout);
  // Git and the target are read only for a revision the planner's own rule would promote; the images
  // written are Git's, never the live spec's, which anyone who may edit the Rollout can change.
  if (verdict.promotable) {
    const fromRead = await deps.source.read();
    git = gitRolloutOf(fromRead, {
      namespace: rollout.namespace,
      name: rollout.name,
      ...(deps.source.namespace !== undefined ? { defaultNamespace: deps.source.namespace } : {}),
      ...(rollout.status.collisionCount !== undefined
        ? { collisionCount: rollout.status.collisionCount }
        : {}),
    });
    const match = matchGit(rollout, verdict.hash, git);
    if (match.matches) {
      const target = await deps.target.read();
      targetEdits = await targetEditsFor(promotion, deps, fromRead.tip, target, [
        { name: rollout.name, images: match.images },
      ]);
      // The edit rendered before anything is pushed: a kustomization it breaks is a refusal, not a broken target.
      if (targetEdits.files.length > 0 && deps.target.checkRender !== undefined)
        targetRenderProblems = await deps.target.checkRender(target.tip, targetEdits.files);
    }
  }
  let pullRequest = await deps.forge.findOpenPullRequest(branch, deps.target.branch);
  const checks =
    promotion.autoMerge && pullRequest !== undefined
      ? await deps.forge.checksState(pullRequest.headSha)
      : undefined;
  // Reviews are read only when auto-merge would wait for one: one more request per look, not per pull request.
  const approvedBy =
    promotion.autoMerge && pullRequest !== undefined && promotion.gates?.requireApproval?.review === true
      ? await deps.forge.approvals(pullRequest.number)
      : undefined;
  const plan = planPromotion({
    promotion: {
      name: promotion.name,
      fromSource: promotion.fromSource,
      toSource: promotion.toSource,
      autoMerge: promotion.autoMerge,
      checksIntervalMs: promotion.checksIntervalMs,
    },
    rollout,
    ...(git !== undefined ? { git } : {}),
    evidence: {
      steps: describeSteps(read),
      analysis: read.observed.analysisRuns
        .filter((run) => run.labels[POD_TEMPLATE_HASH_LABEL] === rollout.status.currentPodHash)
        .map((run) => ({ name: run.name, phase: run.phase })),
    },
    targetEdits: targetEdits.files,
    targetDeletions: targetEdits.deletions,
    ...(targetEdits.promoted !== undefined ? { files: targetEdits.promoted } : {}),
    targetRenderProblems,
    ...(pullRequest !== undefined
      ? { pullRequest: { ...pullRequest, ...(approvedBy !== undefined ? { approvedBy } : {}) } }
      : {}),
    ...(checks !== undefined ? { checks } : {}),
    ...(promotion.gates !== undefined
      ? { gating: { gates: promotion.gates, now: deps.now?.() ?? new Date() } }
      : {}),
  });
  if (plan.refusal !== undefined) log.warn({ state: plan.state, reason: plan.refusal }, 'promotion refused');
  else log.info({ state: plan.state, actions: plan.actions.map((a) => a.kind) }, plan.summary);
  const status = planCommitStatus(promotion.fromSource, rollout, {
    refused: plan.refusal !== undefined,
    ...(plan.refusalKind !== undefined ? { refusalKind: plan.refusalKind } : {}),
  });
  const reported = status === undefined ? {} : { commitStatus: `${status.state}: ${status.description}` };
  if (options.dryRun) return { plan, ...reported, ...(pullRequest !== undefined ? { pullRequest } : {}) };

  const onForge = deps.onForge;
  const reporting: PromotionDeps = {
    ...deps,
    ...(onForge && {
      onForge: (what, detail) => onForge(what, { ...detail, rollout: read.raw }),
    }),
  };
  if (plan.refusal !== undefined) deps.onRefused?.(plan.refusal);
  for (const action of plan.actions) pullRequest = await act(action, pullRequest, promotion, reporting);
  // The status goes last: the forge spaces writes (1 s on GitHub), and the pull request is what waits on it.
  if (status !== undefined) await postCommitStatus(deps, status);
  return { plan, ...reported, ...(pullRequest !== undefined ? { pullRequest } : {}) };
}

/** Posts a commit status unless this process posted the same one already. */
export async function postCommitStatus(deps: PromotionDeps, status: PlannedCommitStatus): Promise<void> {
  const posted = deps.postedStatuses ?? new Map<string, string>();
  const id = `${status.sha} ${status.context}`;
  const value = `${status.state} ${status.description}`;
  if (posted.get(id) === value) return;
  await deps.forge.setCommitStatus(status);
  posted.set(id, value);
}

/** The target's edits for workloads' images and the promotion's files, read at the `from` commit `fromTip`. */
export async function targetEditsFor(
  promotion: PromotionSpec,
  deps: PromotionDeps,
  fromTip: string,
  target: { tip: string; files: PromotionFile[] },
  images: ReadonlyArray<{ name: string; images: ContainerImage[] }>,
): Promise<TargetEdits> {
  const moves = promotion.files ?? [];
  const { readFiles: readFrom } = deps.source;
  const { readFiles: readTarget } = deps.target;
  if (moves.length > 0 && (readFrom === undefined || readTarget === undefined))
    throw new Error(`promotion ${promotion.name} has files but its sources cannot read files`);
  const none: FilesReader = () => Promise.resolve([]);
  return targetEditsOf({
    moves,
    fromCommit: fromTip,
    readFrom: readFrom ?? none,
    target: { ...target, root: deps.target.root ?? '' },
    readTarget: readTarget ?? none,
    images,
    editImages: deps.editImages,
  });
}

/** Carries out one action; returns the open pull request as it is afterwards. */
export async function act(
  action: PromotionAction,
  current: PullRequest | undefined,
  promotion: PromotionSpec,
  deps: PromotionDeps,
): Promise<PullRequest | undefined> {
  const { forge, target } = deps;
  switch (action.kind) {
    case 'pushBranch':
      await target.push({
        branch: action.branch,
        files: action.files,
        ...(action.deletions !== undefined ? { deletions: action.deletions } : {}),
        message: action.message,
        author: promotion.author,
      });
      return current;
    case 'openPullRequest': {
      try {
        const opened = await forge.openPullRequest({
          head: action.head,
          base: target.branch,
          title: action.title,
          body: action.body,
          labels: promotion.labels,
          reviewers: promotion.reviewers,
          draft: promotion.draft,
        });
        deps.onForge?.('opened', { pullRequest: { number: opened.number, url: opened.url }, rollout: {} });
        return opened;
      } catch (error) {
        // Another process (or a restart) opened it meanwhile: adopt it rather than open a second one.
        if (!(error instanceof ForgeError) || error.code !== 'forge.conflict') throw error;
        const existing = await forge.findOpenPullRequest(action.head, target.branch);
        if (existing === undefined) throw error;
        return await forge.updatePullRequest(existing.number, { title: action.title, body: action.body });
      }
    }
    case 'updatePullRequest':
      return await forge.updatePullRequest(action.number, {
        title: action.title ?? (current ?? (await forge.getPullRequest(action.number))).title,
        body: action.body,
      });
    case 'commentPullRequest':
      await forge.comment(action.number, action.body);
      return current;
    case 'closePullRequest':
      await forge.closePullRequest(action.number, action.comment);
      deps.onForge?.('closed', { pullRequest: { number: action.number }, rollout: {} });
      return undefined;
    case 'mergePullRequest':
      await forge.merge(action.number, action.sha);
      deps.onForge?.('merged', {
        pullRequest: { number: action.number, ...(current?.url && { url: current.url }) },
        rollout: {},
      });
      return undefined;
  }
}
