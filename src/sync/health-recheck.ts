// When the health of a source whose commits get a commit status must be looked at again, before its next scheduled poll.
import type { SourceStatusWithHealth } from './plan-source-commit-status.ts';

/** Look again this soon while the synced commit's objects are changing (a canary's steps, pods starting). */
export const HEALTH_RECHECK_MS = 5_000;
/** ... and this soon while they wait for something that may take long (a paused canary, an object missing). */
export const HEALTH_RECHECK_SLOW_MS = 30_000;

/**
 * The wait before the next health look, for a source that reports `rollgate/<source>` on its commits:
 * its commit status moves only when its health does, and the scheduled polls may be an hour apart.
 * Undefined when the status cannot change by health alone (objects not applied), the health is settled (Healthy or Degraded at the synced commit: the next change comes
 * with a new commit or a scheduled poll) or nothing was synced yet.
 */
export function healthRecheckAfterMs(status: SourceStatusWithHealth | undefined): number | undefined {
  const commit = status?.commit;
  // Objects of the commit were not applied: its status is `failure` whatever the others' health says.
  if (commit === undefined || (status?.problems ?? []).length > 0) return undefined;
  const health = status?.health;
  if (health === undefined || (health.commit !== undefined && health.commit !== commit))
    return HEALTH_RECHECK_MS;
  switch (health.status) {
    case 'Healthy':
    case 'Degraded':
      return undefined;
    case 'Progressing':
      return HEALTH_RECHECK_MS;
    default:
      return HEALTH_RECHECK_SLOW_MS;
  }
}
