// The `web` Rollout the promotion tests and bench keep in Git, and its live state as the cluster has it.
import { toPlainObject, type KubeClients } from '../../src/kube/client.ts';

export interface WebRolloutOptions {
  /** metadata lines after `name: web` (e.g. an annotations block, each line indented by two spaces). */
  metadata?: string;
  /** spec lines after `replicas: 2` (e.g. a progress deadline). */
  spec?: string;
  /** The second step (default a 1 s pause). */
  secondStep?: string;
}

/**
 * `web` as a user writes it: a comment, a quoted image with a trailing comment (so image rewrites are seen to
 * keep both), one 50 % step and a pause.
 */
export function webRollout(image: string, options: WebRolloutOptions = {}): string {
  return `# the web tier
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
${options.metadata ?? ''}spec:
  replicas: 2
${options.spec ?? ''}  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: app
          image: "${image}"   # promoted by Rollgate
  strategy:
    canary:
      steps:
        - setWeight: 50
        - ${options.secondStep ?? 'pause: { duration: 1s }'}
`;
}

/** What the tests read of the live `web` Rollout. */
export interface LiveWebRollout {
  spec: { template: { spec: { containers: Array<{ image: string }> } } };
  status?: {
    phase?: string;
    currentPodHash?: string;
    stableRS?: string;
    currentStepIndex?: number;
    message?: string;
  };
}

/** The `web` Rollout in `namespace`, or undefined while it does not exist (or cannot be read). */
export async function liveWebRollout(
  clients: KubeClients,
  namespace: string,
  group: 'rollgate.dev' | 'argoproj.io' = 'rollgate.dev',
): Promise<LiveWebRollout | undefined> {
  try {
    return toPlainObject<LiveWebRollout>(
      await clients.custom.getNamespacedCustomObject({
        group,
        version: 'v1alpha1',
        namespace,
        plural: 'rollouts',
        name: 'web',
      }),
    );
  } catch {
    return undefined;
  }
}
