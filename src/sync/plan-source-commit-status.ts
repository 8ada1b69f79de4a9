// The commit status `rollgate/<source>` a source's status calls for, and whether a status write changed it.
import type { SourceStatus } from './source-status.ts';

/** A source status with the optional `health` field (a source's aggregated health) read when present. */
export type SourceStatusWithHealth = SourceStatus & {
  health?: { status?: string; message?: string; commit?: string | undefined } | undefined;
};

/** A commit status to post (the forge's CommitStatus, which sync/ does not import). */
export interface PlannedSourceCommitStatus {
  sha: string;
  state: 'pending' | 'success' | 'failure';
  /** `rollgate/<source>`. */
  context: string;
  /** At most 140 characters. */
  description: string;
  targetUrl?: string;
}

/** GitHub's limit on a status description (GitLab and Gitea take at least as much). */
const MAX_DESCRIPTION = 140;

/** What the forge should say of the commit a source status is about. */
export interface SourceCommitState {
  commit: string;
  state: 'pending' | 'success' | 'failure';
  description: string;
}

function short(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length <= MAX_DESCRIPTION ? line : `${line.slice(0, MAX_DESCRIPTION - 1)}…`;
}

/**
 * The state of the commit the cluster runs (`status.commit`): `failure` while objects of it were not
 * applied (problems) or its objects are Degraded, `success` once they are Healthy, else `pending` (they
 * are Progressing, or the polls have not looked at this commit's objects yet: a sync keeps the health
 * the polls found at the commit before, which says nothing of this one).
 * The phase is not read: a Failed attempt (Git unreachable, a retried write of a newer commit) leaves the
 * cluster at `commit`, whose outcome is still what its sync said. Undefined before a first sync.
 */
export function sourceCommitState(status: SourceStatusWithHealth | undefined): SourceCommitState | undefined {
  const commit = status?.commit;
  if (status === undefined || commit === undefined) return undefined;
  const problems = status.problems ?? [];
  if (problems.length > 0) {
    const first = problems[0]!;
    return {
      commit,
      state: 'failure',
      description: short(
        `${problems.length} object(s) not applied: ${first.file}:${first.line}: ${first.message}`,
      ),
    };
  }
  const health =
    status.health?.commit === undefined || status.health.commit === commit ? status.health : undefined;
  if (health === undefined)
    return { commit, state: 'pending', description: 'applied, checking the health of its objects' };
  if (health.status === 'Degraded')
    return { commit, state: 'failure', description: short(`applied, unhealthy: ${health.message ?? ''}`) };
  if (health.status === 'Healthy') return { commit, state: 'success', description: 'applied, healthy' };
  return {
    commit,
    state: 'pending',
    description: short(`applied, waiting for objects to be healthy (${health.status ?? 'Unknown'})`),
  };
}

/**
 * The state of every commit a source status tells of: the commit the cluster runs (see
 * {@link sourceCommitState}) and, when an ordered sync of another commit failed for good (`halted`: a hook
 * failed, a wave timed out), that commit as `failure` with the reason: the sync of it failed, so the
 * commit was never deployed (the cluster keeps the one before). A halted commit that is the synced one
 * (its later waves failed) is reported once, as the failure.
 */
export function sourceCommitStates(status: SourceStatusWithHealth | undefined): SourceCommitState[] {
  const halted = status?.halted;
  const running = sourceCommitState(status);
  const failed: SourceCommitState | undefined =
    halted === undefined
      ? undefined
      : { commit: halted.commit, state: 'failure', description: short(`sync failed: ${halted.reason}`) };
  if (failed === undefined) return running === undefined ? [] : [running];
  return running === undefined || running.commit === failed.commit ? [failed] : [running, failed];
}

/**
 * The commit statuses to post after a status write, once per (commit, state): none for a commit whose
 * state is what it was before the write (a retried attempt, a recovery, a new message), so a restart, a
 * poll that finds nothing new or a status written again posts nothing.
 */
export function planSourceCommitStatuses(
  source: string,
  before: SourceStatusWithHealth | undefined,
  after: SourceStatusWithHealth,
  options: { targetUrl?: string } = {},
): PlannedSourceCommitStatus[] {
  const known = new Set(sourceCommitStates(before).map((s) => `${s.commit} ${s.state}`));
  return sourceCommitStates(after)
    .filter((next) => !known.has(`${next.commit} ${next.state}`))
    .map((next) => ({
      sha: next.commit,
      state: next.state,
      context: `rollgate/${source}`,
      description: next.description,
      ...(options.targetUrl !== undefined && { targetUrl: options.targetUrl }),
    }));
}
