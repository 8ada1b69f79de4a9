// The sandbox's pod annotation contract: how a pod (template) asks the simulated kubelet for trouble.

/** Which failure (or success) mode the simulated kubelet plays for a pod. */
export const behaviorAnnotation = 'sandbox.rollgate.dev/behavior';
/** For `slow-start`: how long until the pod becomes Ready, e.g. `20s`. */
export const readyAfterAnnotation = 'sandbox.rollgate.dev/ready-after';
/** For Job pods: `succeed` (default) or `fail`. */
export const jobResultAnnotation = 'sandbox.rollgate.dev/job-result';
/** For Job pods: how long the container runs before it exits (default `2s`). */
export const jobDurationAnnotation = 'sandbox.rollgate.dev/job-duration';

/** The behaviours `sandbox.rollgate.dev/behavior` accepts. */
export const podBehaviors = [
  'ready',
  'image-pull-backoff',
  'crash-loop',
  'never-ready',
  'config-error',
  'slow-start',
] as const;

/** One value of `sandbox.rollgate.dev/behavior`. */
export type PodBehavior = (typeof podBehaviors)[number];

/** The behaviour a pod asks for; absent or unrecognized values mean `ready`. */
export function podBehavior(annotations: Record<string, string> | undefined): PodBehavior {
  const value = annotations?.[behaviorAnnotation]?.trim();
  return (podBehaviors as readonly string[]).includes(value ?? '') ? (value as PodBehavior) : 'ready';
}
