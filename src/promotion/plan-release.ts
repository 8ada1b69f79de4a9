// The release planner: several Rollouts of one source promoted together, with the files, as one pull request.
import type { PromotionPlan, PromotionFile, TargetRenderProblem } from './promotion-action.ts';
import { matchGit, type ContainerImage, type GitRollout } from './git-rollout.ts';
import {
  planPullRequest,
  type OpenPullRequestView,
  type PromotedFiles,
  type PromotionPlanInput,
  withMarker,
} from './plan-promotion.ts';
import { promotability, type PromotionRollout } from './promotable-revision.ts';
import { soakVerdict, type PromotionGates, type SoakVerdict } from './promotion-gates.ts';
import { filesSection, imageTag, markerLine, readMarker, type PromotionMarker } from './pull-request-text.ts';

/** One Rollout of the release as the look read it. */
export interface ReleaseMember {
  rollout: PromotionRollout;
  /** As the `from` source's Git holds it at the commit the look read (read by the edge only when promotable). */
  git?: GitRollout;
  /** The image it had in the target before (for the body: `1.0.0 → 2.0.0`), when the edge read it. */
  targetImages?: ContainerImage[];
}

export interface ReleasePlanInput {
  promotion: PromotionPlanInput['promotion'];
  /** The namespace the release's Rollouts run in, in the `from` source. */
  namespace: string;
  /** Every Rollout the release names, in the configured order; a Rollout not in the cluster yet is `undefined`. */
  members: ReadonlyArray<{ name: string; read?: ReleaseMember }>;
  /** All the target edits: every member's images and the promotion's files (only the files that change). */
  targetEdits: PromotionFile[];
  targetDeletions?: string[];
  files?: PromotedFiles;
  targetRenderProblems?: TargetRenderProblem[];
  pullRequest?: OpenPullRequestView;
  checks?: 'pending' | 'success' | 'failure';
  gating?: { gates: PromotionGates; now: Date };
}

/** Rollgate's branch for one release: one branch, at most one open pull request. */
export function releaseBranch(promotion: string): string {
  return `rollgate/promote/${promotion}/release`;
}

/** `web@h2,api@h7`: what the pull request promotes, in the configured order. */
function releaseRevision(members: ReadonlyArray<{ name: string; hash: string }>): string {
  return members.map((m) => `${m.name}@${m.hash}`).join(',');
}

/**
 * Plans one look at a release. A pull request is proposed only when every Rollout of the release finished
 * a healthy canary at the template the `from` source's Git holds at one commit (the one the look read), so
 * the services and the files all come from the same commit. Until then nothing is pushed; an open pull
 * request keeps the last release that qualified, and is superseded once all of them qualify again at a
 * newer commit with anything changed (a revision or a file). An abort of any of them is reported once on
 * the open pull request. Soak: every Rollout must have soaked; the gates of auto-merge apply to the one pull
 * request.
 */
export function planRelease(input: ReleasePlanInput): PromotionPlan {
  const { promotion, pullRequest } = input;
  const key = `${input.namespace}/${promotion.name}`;
  const marker = pullRequest === undefined ? undefined : readMarker(pullRequest.body);

  const waiting: string[] = [];
  for (const member of input.members) {
    if (member.read === undefined) {
      waiting.push(`${member.name} is not in ${promotion.fromSource} yet`);
      continue;
    }
    const verdict = promotability(member.read.rollout);
    if (verdict.promotable) continue;
    const aborted =
      verdict.aborted && verdict.hash !== undefined ? `${member.name}@${verdict.hash}` : undefined;
    if (
      aborted !== undefined &&
      pullRequest !== undefined &&
      marker !== undefined &&
      !marker.revision.split(',').includes(aborted) &&
      marker.abortedAfter !== aborted
    ) {
      const next: PromotionMarker = { ...marker, abortedAfter: aborted };
      return {
        actions: [
          {
            kind: 'commentPullRequest',
            number: pullRequest.number,
            body: `A newer revision \`${verdict.hash}\` of ${member.name} aborted in \`${promotion.fromSource}\` (${member.read.rollout.status.message ?? 'aborted'}). This pull request still promotes the last healthy release \`${marker.revision}\`.`,
          },
          {
            kind: 'updatePullRequest',
            number: pullRequest.number,
            body: withMarker(pullRequest.body, next),
          },
        ],
        state: 'blocked',
        summary: `${key}: ${member.name} revision ${verdict.hash} aborted; pull request #${pullRequest.number} keeps ${marker.revision}`,
      };
    }
    waiting.push(`${member.name}: ${verdict.reason}`);
  }
  if (waiting.length > 0)
    return {
      actions: [],
      state: pullRequest !== undefined ? 'open' : 'waiting',
      summary: `${key}: the release waits for every Rollout (${waiting.join('; ')})`,
    };

  // Every member is promotable: each must be what Git holds, all at the one commit the look read.
  const matched: Array<{
    name: string;
    hash: string;
    commit: string;
    images: ContainerImage[];
    before?: ContainerImage[];
  }> = [];
  for (const member of input.members) {
    const read = member.read as ReleaseMember;
    const hash = read.rollout.status.currentPodHash as string;
    const git = matchGit(read.rollout, hash, read.git);
    if (!git.matches)
      return {
        actions: [],
        state: 'refused',
        summary: `${key}: ${git.reason}`,
        refusal: git.reason,
        refusalKind: 'not-in-git',
      };
    matched.push({
      name: member.name,
      hash,
      commit: git.commit,
      images: git.images,
      ...(read.targetImages !== undefined ? { before: read.targetImages } : {}),
    });
  }
  const commits = new Set(matched.map((m) => m.commit));
  if (commits.size > 1)
    // The edge reads the source once per look; two commits mean a caller mixed reads, and the release waits.
    return {
      actions: [],
      state: pullRequest !== undefined ? 'open' : 'waiting',
      summary: `${key}: the release's Rollouts were read at ${commits.size} commits`,
    };
  const commit = matched[0]?.commit ?? '';
  const revision = releaseRevision(matched);
  const desired: PromotionMarker = {
    promotion: promotion.name,
    rollout: key,
    revision,
    ...(input.files !== undefined ? { files: input.files.digest } : {}),
  };
  const title = `Release ${matched.map((m) => `${m.name} ${m.images[0] === undefined ? m.hash : imageTag(m.images[0].image)}`).join(', ')}`;
  const body = releaseBody(desired, promotion, commit, matched, input.files);

  // The soak is the release's: it passed once every Rollout soaked; it is asked while the pull request does not carry this release.
  const soakMs = input.gating?.gates.soakMs;
  let soak: SoakVerdict | undefined;
  if (input.gating !== undefined && soakMs !== undefined && marker?.revision !== revision) {
    const now = input.gating.now;
    const pending = input.members.flatMap((member) => {
      const read = member.read as ReleaseMember;
      const verdict = soakVerdict(
        read.rollout.status,
        read.rollout.status.currentPodHash as string,
        soakMs,
        now,
      );
      return verdict.passed ? [] : [verdict];
    });
    if (pending.length > 0)
      soak = {
        passed: false,
        reason: pending.map((p) => p.reason).join('; '),
        retryAfterMs: Math.max(...pending.map((p) => p.retryAfterMs)),
      };
  }

  return planPullRequest({
    promotion,
    key,
    branch: releaseBranch(promotion.name),
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
      runs: `\`${promotion.toSource}\` already runs the release \`${revision}\``,
      runsShort: `${promotion.toSource} runs the release ${revision}`,
      finished: `every Rollout of the release finished a healthy canary in \`${promotion.fromSource}\` at commit \`${commit.slice(0, 12)}\` (\`${revision}\`)`,
      commitMessage: `Every Rollout finished a healthy canary in ${promotion.fromSource} at commit ${commit}: ${revision}.`,
      subject: `release ${revision}`,
    },
  });
}

function releaseBody(
  marker: PromotionMarker,
  promotion: PromotionPlanInput['promotion'],
  commit: string,
  members: ReadonlyArray<{ name: string; hash: string; images: ContainerImage[]; before?: ContainerImage[] }>,
  files: PromotedFiles | undefined,
): string {
  const change = (image: ContainerImage, before: ContainerImage[] | undefined): string => {
    const old = before?.find((b) => b.container === image.container)?.image;
    return old === undefined || old === image.image
      ? `\`${image.image}\``
      : `\`${old}\` → \`${image.image}\``;
  };
  const lines = [
    `Rollgate releases ${members.length} Rollouts from \`${promotion.fromSource}\` to \`${promotion.toSource}\`: each finished a healthy canary there at commit \`${commit || 'unknown'}\`. Merging runs each one's canary in \`${promotion.toSource}\`.`,
    '',
    '| Rollout | revision | images |',
    '| --- | --- | --- |',
    ...members.map(
      (m) =>
        `| ${m.name} | \`${m.hash}\` | ${m.images.map((i) => `${i.container}: ${change(i, m.before)}`).join('<br>')} |`,
    ),
    ...filesSection(files?.edits),
  ];
  if (marker.abortedAfter !== undefined)
    lines.push(
      '',
      `> A newer revision \`${marker.abortedAfter}\` aborted in \`${promotion.fromSource}\`; this pull request still promotes the last healthy release.`,
    );
  lines.push('', markerLine(marker));
  return lines.join('\n');
}
