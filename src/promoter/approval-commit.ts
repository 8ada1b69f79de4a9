// `rollgate approve`: the Git commit (or pull request) that approves the pause a Rollout waits at.
import type { RollgateConfig, SourceConfig } from '../config/schema.ts';
import { resolveSourceAuth } from '../config/source-auth.ts';
import type { PullRequest } from '../forge/forge.ts';
import { DEFAULT_PROMOTION_COMMITTER, pushPromotionCommit } from '../git/promotion-branch.ts';
import type { PromotionCommitResult } from '../git/promotion-branch.ts';
import { GitSourceError } from '../git/errors/git-source-error.ts';
import { GitSource } from '../git/source.ts';
import type { KubeClients } from '../kube/client.ts';
import { ObservedStateReader } from '../reconciler/observed-state-reader.ts';
import { syncedRolloutApi } from '../manifest/driven-api.ts';
import type { Logger } from '../log/logger.ts';
import { silentLogger } from '../log/logger.ts';
import { setRolloutAnnotation } from '../promotion/rollout-annotation.ts';
import { APPROVE_ANNOTATION, approvalFor } from '../rollout/approval.ts';
import { FILE_ANNOTATION, SOURCE_LABEL } from '../sync/sync-labels.ts';
import { ApprovalError } from './approval-error.ts';
import { buildPromotions } from './build-promotions.ts';

/** What to approve and how. */
export interface ApprovalRequest {
  name: string;
  namespace: string;
  /** Push a branch and open a pull request instead of committing onto the source branch. */
  pullRequest?: boolean;
  /** The commit's author (default: Rollgate); the CLI passes GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL. */
  author?: { name: string; email: string };
}

/** Where the approval goes: the cluster to read, the configuration of sources and promotions. */
export interface ApprovalContext {
  config: RollgateConfig;
  clients: KubeClients;
  env?: Record<string, string | undefined>;
  /** Default `config.git.cacheDir`. */
  cacheDir?: string;
  logger?: Logger;
}

/** The pause a Rollout waits at: its revision and step. */
export interface ApprovalGate {
  hash: string;
  step: number;
}

/** What `approve` did. `already`: Git already had the approval, nothing was pushed. */
export type ApprovalOutcome =
  | {
      kind: 'commit';
      gate: ApprovalGate;
      source: string;
      file: string;
      branch: string;
      commit: string;
      already: boolean;
    }
  | {
      kind: 'pull-request';
      gate: ApprovalGate;
      source: string;
      file: string;
      branch: string;
      commit: string;
      already: boolean;
      pullRequest?: PullRequest;
    };

type Raw = Record<string, unknown>;

const record = (value: unknown): Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Raw) : {};

/** A canary step as `rollgate status` would say it. */
function describeStep(step: Raw): string {
  if (step.setWeight !== undefined) return `setWeight ${String(step.setWeight)}`;
  if (step.pause !== undefined) {
    const duration = record(step.pause).duration;
    return duration === undefined ? 'pause (indefinite)' : `pause ${String(duration)}`;
  }
  if (step.setCanaryScale !== undefined) return 'setCanaryScale';
  if (step.analysis !== undefined) return 'analysis';
  return Object.keys(step)[0] ?? 'an unknown step';
}

/**
 * The indefinite pause the Rollout (as read from the cluster) waits at, or an `approval.not_at_gate` error
 * naming what it is doing instead.
 */
export function approvalGateOf(rollout: Raw): ApprovalGate {
  const metadata = record(rollout.metadata);
  const who = `rollout ${String(metadata.namespace)}/${String(metadata.name)}`;
  const status = record(rollout.status);
  const steps = record(record(record(rollout.spec).strategy).canary).steps;
  const notAtGate = (doing: string): ApprovalError =>
    new ApprovalError(
      'approval.not_at_gate',
      `${who} ${doing}; only an indefinite pause (pause: {}) is approved in Git`,
    );
  const hash = status.currentPodHash;
  const index = status.currentStepIndex;
  if (status.abort === true) throw notAtGate('is aborted (rollgate retry starts it again)');
  if (!Array.isArray(steps) || steps.length === 0) throw notAtGate('has no canary steps');
  if (typeof hash !== 'string' || hash === '' || typeof index !== 'number')
    throw notAtGate('has not started a revision yet (no status.currentPodHash / currentStepIndex)');
  if (index >= steps.length)
    throw notAtGate(`has finished its steps (phase ${String(status.phase ?? 'unknown')})`);
  const step = record(steps[index]);
  const where = `is at step ${index} of ${steps.length}, ${describeStep(step)}`;
  if (step.pause === undefined) throw notAtGate(where);
  if (record(step.pause).duration !== undefined) throw notAtGate(`${where}, which ends by itself`);
  return { hash, step: index };
}

/** The configured source the Rollout was synced from and its file's path, from sync's label and annotation. */
function sourceAndFile(config: RollgateConfig, rollout: Raw): { source: SourceConfig; file: string } {
  const metadata = record(rollout.metadata);
  const who = `rollout ${String(metadata.namespace)}/${String(metadata.name)}`;
  const sourceName = record(metadata.labels)[SOURCE_LABEL];
  const file = record(metadata.annotations)[FILE_ANNOTATION];
  if (typeof sourceName !== 'string' || typeof file !== 'string') {
    throw new ApprovalError(
      'approval.source_unknown',
      `${who} was not synced from Git (no ${SOURCE_LABEL} label or ${FILE_ANNOTATION} annotation); approve it with rollgate promote`,
    );
  }
  const source = config.sources.find((candidate) => candidate.name === sourceName);
  if (source === undefined) {
    throw new ApprovalError(
      'approval.source_unknown',
      `${who} comes from source "${sourceName}", which the configuration does not have (sources: ${config.sources.map((s) => s.name).join(', ') || 'none'})`,
    );
  }
  return { source, file };
}

/** The Rollout's file at the source branch's tip. */
async function readFile(
  source: SourceConfig,
  file: string,
  context: ApprovalContext,
): Promise<{ tip: string; text: string }> {
  const auth = resolveSourceAuth(source, context.env ?? process.env);
  // Its own cache: a running poller may be using the source's.
  const reader = new GitSource(
    {
      name: `approve-${source.name}`,
      url: source.url,
      branch: source.branch,
      path: source.path,
      ...(auth ? { auth } : {}),
    },
    { cacheDir: context.cacheDir ?? context.config.git.cacheDir, logger: context.logger ?? silentLogger },
  );
  try {
    const tip = await reader.fetch();
    const found = (await reader.readManifestFiles(tip)).find((candidate) => candidate.path === file);
    if (found === undefined) {
      throw new ApprovalError(
        'approval.file_not_found',
        `${file} is not in source ${source.name} at ${source.branch} (${tip.slice(0, 12)}); was it moved or deleted?`,
      );
    }
    return { tip, text: found.text };
  } finally {
    await reader.close();
  }
}

/** `Approve <rollout> step <n> (revision <hash>)`. */
export function approvalTitle(name: string, gate: ApprovalGate): string {
  return `Approve ${name} step ${gate.step} (revision ${gate.hash})`;
}

/** Rollgate's branch for an approval pull request. */
export function approvalBranch(name: string, gate: ApprovalGate): string {
  return `rollgate/approve/${name}/${gate.hash}-${gate.step}`;
}

/**
 * Writes `rollgate.dev/approve: "<hash>/<step>"` into the Rollout's manifest in Git for the indefinite pause
 * it waits at: committed onto the source branch and pushed as a fast-forward (when the branch moved between
 * the read and the push, the file is read again at the new tip and the push tried once more), or, with
 * `pullRequest`, pushed to `rollgate/approve/<rollout>/<hash>-<step>` and proposed through the forge of a
 * promotion that has this source as its `to` (preferred: same repository) or `from`.
 *
 * Throws an {@link ApprovalError} when the Rollout is not at such a pause or cannot be traced to a file,
 * an ImageRewriteError when the file cannot be edited, and Git or forge errors as they come.
 */
export async function approveRollout(
  request: ApprovalRequest,
  context: ApprovalContext,
): Promise<ApprovalOutcome> {
  const key = { namespace: request.namespace, name: request.name };
  // Approvals edit Git, so the Rollout is one the sync applied: in the sync's group.
  const rollout = await new ObservedStateReader(
    context.clients,
    undefined,
    syncedRolloutApi(context.config.controller.groups),
  ).readRolloutObject(key);
  if (rollout === undefined) {
    throw new ApprovalError('approval.rollout_not_found', `rollout ${key.namespace}/${key.name} not found`);
  }
  const gate = approvalGateOf(rollout);
  const { source, file } = sourceAndFile(context.config, rollout);
  const value = approvalFor(gate.hash, gate.step);
  const title = approvalTitle(request.name, gate);
  const message = `${title}\n\n${APPROVE_ANNOTATION}: "${value}" in ${file}\n`;
  const auth = resolveSourceAuth(source, context.env ?? process.env);
  const cacheDir = context.cacheDir ?? context.config.git.cacheDir;
  const push = async (branch: string, fastForward: boolean): Promise<PromotionCommitResult> => {
    const { tip, text } = await readFile(source, file, context);
    const edited = setRolloutAnnotation(text, key, APPROVE_ANNOTATION, value, { path: file });
    return pushPromotionCommit({
      source: source.name,
      url: source.url,
      ...(auth ? { auth } : {}),
      baseBranch: source.branch,
      branch,
      ...(fastForward ? { fastForward: true, expectedBase: tip } : {}),
      files: [{ path: file, text: edited }],
      message,
      author: request.author ?? DEFAULT_PROMOTION_COMMITTER,
      cacheDir,
      logger: context.logger ?? silentLogger,
    });
  };
  const common = { gate, source: source.name, file };

  if (!request.pullRequest) {
    let result: PromotionCommitResult;
    try {
      result = await push(source.branch, true);
    } catch (error) {
      // Someone pushed between our read and our push: the approval goes on top of their commit instead.
      if (!(error instanceof GitSourceError) || error.code !== 'git.push-rejected') throw error;
      result = await push(source.branch, true);
    }
    return {
      kind: 'commit',
      ...common,
      branch: source.branch,
      commit: result.commit,
      already: result.outcome === 'in-base',
    };
  }

  const promotions = context.config.promotions;
  const promotion =
    promotions.find((candidate) => candidate.to.source === source.name) ??
    promotions.find((candidate) => candidate.from.source === source.name);
  if (promotion === undefined) {
    throw new ApprovalError(
      'approval.no_promotion',
      `--pr opens the pull request with a promotion's pullRequest settings (forge, repository, token), and no promotion has source ${source.name} as its from or to; add one, or approve without --pr`,
    );
  }
  const branch = approvalBranch(request.name, gate);
  const result = await push(branch, false);
  if (result.outcome === 'in-base') {
    return { kind: 'pull-request', ...common, branch: source.branch, commit: result.commit, already: true };
  }
  const built = buildPromotions(
    { ...context.config, promotions: [promotion] },
    { logger: context.logger ?? silentLogger, cacheDir, ...(context.env ? { env: context.env } : {}) },
  )[0];
  if (built === undefined) throw new Error(`promotion ${promotion.name} was not built`);
  const { forge } = built;
  const open = await forge.findOpenPullRequest(branch, source.branch);
  const pullRequest =
    open ??
    (await forge.openPullRequest({
      head: branch,
      base: source.branch,
      title,
      body: `Approves the pause of Rollout \`${key.namespace}/${key.name}\` at step ${gate.step} for revision \`${gate.hash}\`: sets \`${APPROVE_ANNOTATION}: "${value}"\` in \`${file}\`.\n\nOnce merged and synced, the rollout continues past that step. Opened by \`rollgate approve --pr\`.`,
      labels: promotion.pullRequest.labels,
      reviewers: promotion.pullRequest.reviewers,
    }));
  return { kind: 'pull-request', ...common, branch, commit: result.commit, already: false, pullRequest };
}

/** One line per thing done, as the CLI prints it. */
export function formatApprovalOutcome(name: string, outcome: ApprovalOutcome): string {
  const value = approvalFor(outcome.gate.hash, outcome.gate.step);
  if (outcome.already) {
    return `${outcome.file} in source ${outcome.source} already has ${APPROVE_ANNOTATION}: "${value}" (${outcome.branch} at ${outcome.commit.slice(0, 12)}); nothing pushed\n`;
  }
  if (outcome.kind === 'commit') {
    return `approved ${name} step ${outcome.gate.step} (revision ${outcome.gate.hash}): commit ${outcome.commit} pushed to ${outcome.branch} (source ${outcome.source}, ${outcome.file})\n`;
  }
  const pr = outcome.pullRequest;
  return `pull request ${pr ? `#${pr.number} ${pr.url}` : ''} approves ${name} step ${outcome.gate.step} (revision ${outcome.gate.hash}): branch ${outcome.branch} at ${outcome.commit}\n`;
}
