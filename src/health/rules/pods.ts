// Health rule for a bare Pod: its phase, a container stuck in a state that will not clear by itself, and its
// Ready condition.
import { conditionOf, describeCondition, recordsAt, stringAt } from '../live-fields.ts';
import type { HealthRule, LiveObject } from '../object-health.ts';

/** Waiting reasons that need a change (an image, a config, a fix) rather than time. */
const STUCK_REASONS = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

/** `container C: Reason: message` for the first init or app container stuck waiting, else undefined. */
function stuckContainer(live: LiveObject): string | undefined {
  const statuses = [
    ...recordsAt(live, 'status', 'initContainerStatuses'),
    ...recordsAt(live, 'status', 'containerStatuses'),
  ];
  for (const status of statuses) {
    const reason = stringAt(status, 'state', 'waiting', 'reason');
    if (reason === undefined || !STUCK_REASONS.has(reason)) continue;
    const name = stringAt(status, 'name') ?? '?';
    const message = stringAt(status, 'state', 'waiting', 'message');
    return `container ${name}: ${reason}${message ? `: ${message}` : ''}`;
  }
  return undefined;
}

/** Succeeded → Healthy; Failed or a stuck container → Degraded; Running and Ready → Healthy; else Progressing. */
export const podHealth: HealthRule = (live) => {
  const phase = stringAt(live, 'status', 'phase');
  if (phase === 'Succeeded') return { status: 'Healthy', message: '' };
  if (phase === 'Failed') {
    const why = [stringAt(live, 'status', 'reason'), stringAt(live, 'status', 'message')].filter(Boolean);
    return { status: 'Degraded', message: why.length > 0 ? why.join(': ') : 'Pod failed' };
  }
  const stuck = stuckContainer(live);
  if (stuck !== undefined) return { status: 'Degraded', message: stuck };
  if (phase === 'Running') {
    const ready = conditionOf(live, 'Ready');
    if (ready?.status === 'True') return { status: 'Healthy', message: '' };
    return { status: 'Progressing', message: 'running, not ready' };
  }
  if (phase === 'Unknown') return { status: 'Unknown', message: 'the node of the pod cannot be reached' };
  const scheduled = conditionOf(live, 'PodScheduled');
  if (scheduled?.status === 'False')
    return { status: 'Progressing', message: `not scheduled: ${describeCondition(scheduled)}` };
  return { status: 'Progressing', message: phase === undefined ? 'waiting for a node' : phase };
};

export const POD_RULES: ReadonlyArray<readonly [string, HealthRule]> = [['/Pod', podHealth]];
