// Where a hook's object is in its run, read from the live object: running, succeeded, or failed and why.

/** A hook's run as a sync waits on it. */
export type HookState =
  { state: 'running'; message: string } | { state: 'succeeded' } | { state: 'failed'; message: string };

type Json = Record<string, unknown>;

const objectOf = (value: unknown): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};

/**
 * A Job succeeded once its `Complete` condition is True and failed once `Failed` is (the reason and
 * message say why: BackoffLimitExceeded, DeadlineExceeded…); a Pod by its phase. Any other kind has no
 * run to finish: it succeeded once it exists. Absent (not created yet, or not visible yet): running.
 */
export function hookStateOf(live: Json | undefined): HookState {
  if (live === undefined) return { state: 'running', message: 'not in the cluster yet' };
  const kind = live.kind;
  const status = objectOf(live.status);
  if (kind === 'Job') {
    const conditions = Array.isArray(status.conditions) ? status.conditions.map(objectOf) : [];
    const isTrue = (type: string): Json | undefined =>
      conditions.find((c) => c.type === type && c.status === 'True');
    const failed = isTrue('Failed');
    if (failed) {
      const reason = typeof failed.reason === 'string' ? failed.reason : 'Failed';
      const message =
        typeof failed.message === 'string' && failed.message !== '' ? `: ${failed.message}` : '';
      return { state: 'failed', message: `${reason}${message}` };
    }
    if (isTrue('Complete')) return { state: 'succeeded' };
    const active = typeof status.active === 'number' ? status.active : 0;
    return { state: 'running', message: active > 0 ? `${active} pod(s) running` : 'no pod running yet' };
  }
  if (kind === 'Pod') {
    const phase = typeof status.phase === 'string' ? status.phase : 'Pending';
    if (phase === 'Succeeded') return { state: 'succeeded' };
    if (phase === 'Failed') {
      const why = typeof status.reason === 'string' ? status.reason : 'the pod failed';
      const message = typeof status.message === 'string' ? `: ${status.message}` : '';
      return { state: 'failed', message: `${why}${message}` };
    }
    return { state: 'running', message: `pod ${phase}` };
  }
  return { state: 'succeeded' };
}
