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
 * The commit status to post after a status write, once per (commit, state): none when the state of the
 * commit is what it was before the write (a retried attempt, a recovery, a new message).
 */
export function planSourceCommitStatus(
  source: string,
  before: SourceStatusWithHealth | undefined,
  after: SourceStatusWithHealth,
  options: { targetUrl?: string } = {},
): PlannedSourceCommitStatus | undefined {
  const next = sourceCommitState(after);
  if (next === undefined) return undefined;
  const last = sourceCommitState(before);
  if (last !== undefined && last.commit === next.commit && last.state === next.state) return undefined;
  return {
    sha: next.commit,
    state: next.state,
    context: `rollgate/${source}`,
    description: next.description,
    ...(options.targetUrl !== undefined && { targetUrl: options.targetUrl }),
  };
}
