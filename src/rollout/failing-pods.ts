// Finds the pods of a revision that are failing and says why, for status messages and events.
import type { ObservedPod } from './observed-state.ts';

/** Waiting reasons that mean a pod will not become ready without a change. */
export const FAILING_WAITING_REASONS: ReadonlySet<string> = new Set([
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

/** One failing container of one pod. */
export interface PodFailure {
  pod: string;
  container: string;
  reason: string;
  message?: string;
}

/** The failing containers of pods with `podTemplateHash`, sorted by pod then container name. */
export function findPodFailures(pods: readonly ObservedPod[], podTemplateHash: string): PodFailure[] {
  const failures: PodFailure[] = [];
  for (const pod of pods) {
    if (pod.podTemplateHash !== podTemplateHash) continue;
    for (const container of pod.containers) {
      const reason = container.waitingReason;
      if (reason !== undefined && FAILING_WAITING_REASONS.has(reason)) {
        failures.push({
          pod: pod.name,
          container: container.name,
          reason,
          message: container.waitingMessage,
        });
      }
    }
  }
  return failures.sort((a, b) => (a.pod + '/' + a.container < b.pod + '/' + b.container ? -1 : 1));
}

/**
 * `pod P container C: Reason: message` for the first failures (at most `limit`), plus "and N more".
 * Empty when nothing fails.
 */
export function describePodFailures(failures: readonly PodFailure[], limit = 3): string {
  const parts = failures.slice(0, limit).map((failure) => {
    const detail = failure.message !== undefined && failure.message !== '' ? `: ${failure.message}` : '';
    return `pod ${failure.pod} container ${failure.container}: ${failure.reason}${detail}`;
  });
  if (failures.length > limit) parts.push(`and ${failures.length - limit} more`);
  return parts.join('; ');
}

/**
 * Pods of `podTemplateHash` that are Ready now but have restarted: a crash loop flaps Ready, so these do
 * not count as progress (F5).
 */
export function countRestartedReadyPods(pods: readonly ObservedPod[], podTemplateHash: string): number {
  return pods.filter(
    (pod) =>
      pod.podTemplateHash === podTemplateHash &&
      pod.ready &&
      pod.containers.some((container) => container.restartCount > 0),
  ).length;
}
