// The promotion planner: from a Rollout's finished revision, the target's files and the open pull request, what to do.
import type {
  PromotionAction,
  PromotionFile,
  PromotionPlan,
  TargetRenderProblem,
} from './promotion-action.ts';
import { matchGit, type GitRollout } from './git-rollout.ts';
import type { FileEdit } from './plan-file-edits.ts';
import { promotability, type PromotionRollout } from './promotable-revision.ts';
import { mergeGateVerdict, soakVerdict, type PromotionGates, type SoakVerdict } from './promotion-gates.ts';
import {
  markerLine,
  pullRequestBody,
  pullRequestTitle,
  readMarker,
  type PromotionEvidence,
  type PromotionMarker,
} from './pull-request-text.ts';

/** The open pull request from the promotion branch, as the forge returned it. */
export interface OpenPullRequestView {
  number: number;
  url: string;
  body: string;
  headSha: string;
  /** Its labels (an approval label is read here). */
  labels?: string[];
  /** Who approves it in a review (read by the edge only when the gates require an approving review). */
  approvedBy?: string[];
}

export interface PromotionPlanInput {
  promotion: {
    name: string;
    fromSource: string;
    toSource: string;
    autoMerge: boolean;
    /** With autoMerge: when to read the checks again while they run, and first after a push. */
    checksIntervalMs: number;
  };
  rollout: PromotionRollout;
  /**
   * The Rollout as the `from` source's Git holds it (read by the edge only for a promotable revision). The
   * images proposed are Git's, and only when the revision that finished is Git's template: without it,
   * nothing is proposed.
   */
  git?: GitRollout;
  /** Steps walked and analysis results, for the body. */
  evidence: Pick<PromotionEvidence, 'steps' | 'analysis' | 'durationSeconds'>;
  /**
   * The target files rewritten to the rollout's images (only those that change); empty when the target
   * already runs them. Computed by the edge from the target branch with the byte-preserving rewrite.
   */
  targetEdits: PromotionFile[];
  /** Target files the promotion's `files` delete (repository paths): deleted in the `from` source. */
  targetDeletions?: string[];
  /** The promotion's `files`, when it has any: what changes in the target, and the digest of what they carry. */
  files?: PromotedFiles;
  /**
   * The target's apps that read an edited file, rendered with the edits applied (by the edge, before
   * anything is pushed): any problem refuses the promotion. Absent or empty: it renders, or nothing to render.
   */
  targetRenderProblems?: TargetRenderProblem[];
  pullRequest?: OpenPullRequestView;
  /** The checks on the open pull request's head (read only with autoMerge). */
  checks?: 'pending' | 'success' | 'failure';
  /** The promotion's gates (soak, merge windows, approval) and the moment of the look they are judged at. */
  gating?: { gates: PromotionGates; now: Date };
}

/** What a promotion's `files` change in the target (see plan-file-edits.ts), for the pull request text and marker. */
export interface PromotedFiles {
  edits: FileEdit[];
  digest: string;
}

/** Rollgate's branch for one promotion and rollout: one branch, at most one open pull request. */
export function promotionBranch(promotion: string, rollout: string): string {
  return `rollgate/promote/${promotion}/${rollout}`;
}

/**
 * Plans one look at a promotion for one rollout. Only a revision that finished a healthy canary is ever
 * proposed; a newer healthy revision supersedes the open pull request (branch force-updated, title and
 * body edited); a target that already runs the revision closes the pull request with a comment; a newer
 * revision that aborted is reported once on the open pull request and never gets one of its own.
 */
export function planPromotion(input: PromotionPlanInput): PromotionPlan {
  const { promotion, rollout, pullRequest, files } = input;
  const key = `${rollout.namespace}/${rollout.name}`;
  const branch = promotionBranch(promotion.name, rollout.name);
  const marker = pullRequest === undefined ? undefined : readMarker(pullRequest.body);
  const verdict = promotability(rollout);
  if (!verdict.promotable) {
    if (
      verdict.aborted &&
      verdict.hash !== undefined &&
      pullRequest !== undefined &&
      marker !== undefined &&
      marker.revision !== verdict.hash &&
      marker.abortedAfter !== verdict.hash
    ) {
      const next: PromotionMarker = { ...marker, abortedAfter: verdict.hash };
      return {
        actions: [
          {
            kind: 'commentPullRequest',
            number: pullRequest.number,
            body: `A newer revision \`${verdict.hash}\` of ${rollout.name} aborted in \`${promotion.fromSource}\` (${rollout.status.message ?? 'aborted'}). This pull request still promotes the last healthy revision \`${marker.revision}\`.`,
          },
          // The marker remembers the report, so it is made once, whichever process looks next.
          { kind: 'updatePullRequest', number: pullRequest.number, body: withMarker(pullRequest.body, next) },
        ],
        state: 'blocked',
        summary: `${key}: revision ${verdict.hash} aborted; pull request #${pullRequest.number} keeps ${marker.revision}`,
      };
    }
    return {
      actions: [],
      state: pullRequest !== undefined ? (verdict.aborted ? 'blocked' : 'open') : 'waiting',
      summary: `${key}: ${verdict.reason}`,
    };
  }

  const hash = verdict.hash;
  // A live template someone changed in the cluster finished its canary as well as Git's would: what it
  // runs is proposed only when it is what Git holds, and the images written are Git's.
  const git = matchGit(rollout, hash, input.git);
  if (!git.matches)
    return {
      actions: [],
      state: 'refused',
      summary: `${key}: ${git.reason}`,
      refusal: git.reason,
      refusalKind: 'not-in-git',
    };
  const evidence: PromotionEvidence = {
    ...input.evidence,
    fromSource: promotion.fromSource,
    toSource: promotion.toSource,
    sourceCommit: git.commit,
    images: git.images,
  };
  const desired: PromotionMarker = {
    promotion: promotion.name,
    rollout: key,
    revision: hash,
    ...(files !== undefined ? { files: files.digest } : {}),
  };
  const title = pullRequestTitle(rollout.name, git.images);
  const body = pullRequestBody(desired, evidence, files?.edits);

  // The soak: a revision's pull request waits until it stayed Healthy long enough (once opened for this
  // revision, it passed; a degradation turns the Healthy condition False and restarts the count).
  const soakMs = input.gating?.gates.soakMs;
  const soak =
    input.gating !== undefined && soakMs !== undefined && marker?.revision !== hash
      ? soakVerdict(rollout.status, hash, soakMs, input.gating.now)
      : undefined;
  return planPullRequest({
    promotion,
    key,
    branch,
    desired,
    title,
    body,
    edits: input.targetEdits,
    deletions: input.targetDeletions ?? [],
    renderProblems: input.targetRenderProblems ?? [],
    ...(soak !== undefined ? { soak } : {}),
    ...(pullRequest !== undefined ? { pullRequest } : {}),
    ...(marker !== undefined ? { marker } : {}),
    ...(input.checks !== undefined ? { checks: input.checks } : {}),
    ...(input.gating !== undefined ? { gating: input.gating } : {}),
    words: {
      runs: `\`${promotion.toSource}\` already runs revision \`${hash}\` of ${rollout.name}`,
      runsShort: `${promotion.toSource} runs revision ${hash}`,
      finished: `revision \`${hash}\` finished a healthy canary in \`${promotion.fromSource}\``,
      commitMessage: `Revision ${hash} finished a healthy canary in ${promotion.fromSource} (commit ${git.commit}).`,
      subject: `revision ${hash}`,
    },
  });
}

/** What the lifecycle says about the promoted thing (one Rollout's revision, or a release). */
export interface PullRequestWords {
  /** "`prod` already runs revision `h2` of web" (a comment). */
  runs: string;
  /** "prod runs revision h2" (a summary). */
  runsShort: string;
  /** "revision `h2` finished a healthy canary in `staging`" (the supersede comment). */
  finished: string;
  /** The commit message's second paragraph. */
  commitMessage: string;
  /** "revision h2" (summaries and refusals). */
  subject: string;
}

/** The pull request lifecycle once a promotable thing matched Git: close, refuse, soak, push, open, supersede, merge. */
export interface PullRequestPlanInput {
  promotion: PromotionPlanInput['promotion'];
  /** The summary's prefix (`shop/web`). */
  key: string;
  branch: string;
  /** The marker the pull request should carry. */
  desired: PromotionMarker;
  title: string;
  body: string;
  edits: PromotionFile[];
  deletions: string[];
  renderProblems: TargetRenderProblem[];
  /** The soak's verdict, judged by the caller only while the pull request does not carry this revision yet. */
  soak?: SoakVerdict;
  pullRequest?: OpenPullRequestView;
  marker?: PromotionMarker;
  checks?: 'pending' | 'success' | 'failure';
  gating?: { gates: PromotionGates; now: Date };
  words: PullRequestWords;
}

/** The open pull request carries exactly `desired`: the same revision(s) and the same files. */
function carries(marker: PromotionMarker | undefined, desired: PromotionMarker): boolean {
  return marker?.revision === desired.revision && marker.files === desired.files;
}

/**
 * The pull request lifecycle shared by a Rollout's promotion and a release: the target already runs it
 * (close), the edit does not render (refuse), the soak (wait), no pull request (push, open), one for an
 * older revision (push, edit, comment "Superseded"), this one (auto-merge behind its gates and checks).
 */
export function planPullRequest(input: PullRequestPlanInput): PromotionPlan {
  const { promotion, key, branch, desired, pullRequest, marker, words } = input;
  if (input.edits.length === 0 && input.deletions.length === 0) {
    if (pullRequest === undefined)
      return { actions: [], state: 'merged', summary: `${key}: ${words.runsShort}` };
    return {
      actions: [
        {
          kind: 'closePullRequest',
          number: pullRequest.number,
          comment: `${words.runs} (merged another way); closing this pull request.`,
        },
      ],
      state: 'closed',
      summary: `${key}: ${words.runsShort} already; closing #${pullRequest.number}`,
    };
  }

  if (input.renderProblems.length > 0) {
    // The pull request would break the target's sync: nothing is pushed or opened; an open one (for an
    // earlier revision) stays as it is.
    const reason = renderRefusal(promotion.toSource, words.subject, input.renderProblems);
    return {
      actions: [],
      state: 'refused',
      summary: `${key}: ${reason}`,
      refusal: reason,
      refusalKind: 'does-not-render',
    };
  }

  if (input.soak !== undefined && !input.soak.passed)
    return {
      actions: [],
      state: pullRequest === undefined ? 'waiting' : 'open',
      summary: `${key}: ${input.soak.reason}`,
      requeueAfterMs: input.soak.retryAfterMs,
      requeueReason: 'soak',
    };

  const push: PromotionAction = {
    kind: 'pushBranch',
    branch,
    files: input.edits,
    ...(input.deletions.length > 0 ? { deletions: input.deletions } : {}),
    message: `${input.title}\n\n${words.commitMessage}`,
  };
  const { title, body } = input;
  // A head just pushed has no checks yet (CI has not seen it): auto-merge looks again after one interval,
  // never at once, or it would merge a head whose checks had not started.
  const checksLater = promotion.autoMerge ? { requeueAfterMs: promotion.checksIntervalMs } : {};
  if (pullRequest === undefined)
    return {
      actions: [push, { kind: 'openPullRequest', head: branch, title, body }],
      state: 'open',
      summary: `${key}: opening a pull request for ${words.subject}`,
      ...checksLater,
    };
  if (!carries(marker, desired))
    return {
      actions: [
        push,
        { kind: 'updatePullRequest', number: pullRequest.number, title, body },
        {
          kind: 'commentPullRequest',
          number: pullRequest.number,
          body: `Superseded: ${words.finished}; the branch now promotes it${marker === undefined ? '' : marker.revision === desired.revision ? ' with the files as they are now' : ` instead of \`${marker.revision}\``}.`,
        },
      ],
      state: 'superseded',
      summary: `${key}: ${words.subject} supersedes ${marker?.revision ?? 'an unmarked pull request'} in #${pullRequest.number}`,
      ...checksLater,
    };
  if (!promotion.autoMerge)
    return {
      actions: [],
      state: 'open',
      summary: `${key}: #${pullRequest.number} promotes ${desired.revision}`,
    };
  if (input.gating !== undefined) {
    const gate = mergeGateVerdict(
      input.gating.gates,
      {
        labels: pullRequest.labels ?? [],
        ...(pullRequest.approvedBy !== undefined ? { approvedBy: pullRequest.approvedBy } : {}),
      },
      input.gating.now,
    );
    if (!gate.allowed) {
      // Told once per situation on the pull request (the marker remembers it), whichever process looks.
      const tell: PromotionAction[] =
        marker === undefined || marker.gateNote === gate.key
          ? []
          : [
              { kind: 'commentPullRequest', number: pullRequest.number, body: gate.note },
              {
                kind: 'updatePullRequest',
                number: pullRequest.number,
                body: withMarker(pullRequest.body, { ...marker, gateNote: gate.key }),
              },
            ];
      return {
        actions: tell,
        state: 'open',
        summary: `${key}: #${pullRequest.number} ${gate.reason}`,
        // An approval (label or review) sends no event Rollgate hears: it is read again every checks interval.
        requeueAfterMs: gate.retryAfterMs ?? promotion.checksIntervalMs,
        requeueReason: gate.key.startsWith('window:') ? 'merge window' : 'approval',
        gate: gate.reason,
      };
    }
  }
  if (input.checks === 'success')
    return {
      actions: [{ kind: 'mergePullRequest', number: pullRequest.number, sha: pullRequest.headSha }],
      state: 'open',
      summary: `${key}: checks passed; merging #${pullRequest.number} at ${pullRequest.headSha}`,
    };
  return {
    actions: [],
    state: 'open',
    summary: `${key}: #${pullRequest.number} waits for its checks (${input.checks ?? 'pending'})`,
    ...(input.checks === 'failure' ? {} : checksLater),
  };
}

/** The refusal of an edit that does not render: the first problem in full, how many more. */
function renderRefusal(toSource: string, subject: string, problems: readonly TargetRenderProblem[]): string {
  const [first] = problems as [TargetRenderProblem, ...TargetRenderProblem[]];
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return `${subject} is not promoted: ${toSource} with the image edit does not render: ${first.file}:${first.line}: ${first.message}${more}`;
}

/** `body` with its marker replaced by `marker`. */
export function withMarker(body: string, marker: PromotionMarker): string {
  return body.replace(/<!-- rollgate:promotion \{.*?\} -->/, markerLine(marker));
}
