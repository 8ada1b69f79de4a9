// What the fleet tests watch of a revision walking a fleet: every cluster's Rollout (image and phase) sampled until
// a wanted state, each sample checked against the wave order; and the Fleet object as a user reads it.
import { toPlainObject } from '../../src/kube/client.ts';
import { imageOf, type ClustersScene } from './clusters-scene.ts';
import { eventually } from './eventually.ts';

/** The Fleet's status as `kubectl get fleet -o yaml` shows it. */
export interface FleetView {
  metadata?: { generation?: number };
  status?: {
    phase?: string;
    revision?: string;
    stableRevision?: string;
    currentWave?: number;
    message?: string;
    stoppedBy?: { cluster?: string; revision?: string; step?: string; reason?: string };
    waves?: Array<{ name: string; phase?: string; clusters?: string[] }>;
    clusters?: Array<{ name: string; wave?: number; phase?: string; revision?: string; released?: string }>;
  };
}

/** What a user sees in each cluster: the image its Rollout runs and its phase. */
export type Snapshot = Record<string, { image: string | undefined; phase: string | undefined }>;

export const healthyOn = (s: Snapshot, cluster: string, image: string): boolean =>
  s[cluster]?.image === image && s[cluster]?.phase === 'Healthy';

/** The Fleet `name` of the state namespace ({} while it does not exist). */
export async function readFleet(clusters: ClustersScene, name: string): Promise<FleetView> {
  try {
    return toPlainObject<FleetView>(
      await clusters.scene.clients.custom.getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: clusters.stateNamespace,
        plural: 'fleets',
        name,
      }),
    );
  } catch {
    return {};
  }
}

/** `kubectl apply` of a Fleet, retried until its CRD (installed by Rollgate as it starts) serves it. */
export async function applyFleet(clusters: ClustersScene, yaml: string): Promise<void> {
  await eventually('the Fleet applied', async () => {
    try {
      await clusters.scene.apply('fleet.yaml', yaml);
      return true;
    } catch {
      return false;
    }
  });
}

/** Every cluster's Rollout in one look. */
export async function snapshot(clusters: ClustersScene, names: readonly string[]): Promise<Snapshot> {
  const out: Snapshot = {};
  for (const cluster of names) {
    const r = await clusters.rolloutIn(cluster);
    out[cluster] = { image: imageOf(r), phase: r?.status?.phase };
  }
  return out;
}

/**
 * Samples every cluster of `waves` until `done` holds of a snapshot; every snapshot on the way is checked
 * against the wave order: a cluster of a later wave never runs `image` before every earlier wave is Healthy
 * on it. The violations seen (none when the order held), and the last snapshot.
 */
export async function walkWaves(
  clusters: ClustersScene,
  waves: ReadonlyArray<readonly string[]>,
  image: string,
  done: (s: Snapshot) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<{ violations: string[]; last: Snapshot }> {
  const violations: string[] = [];
  let seen: Snapshot = {};
  const last = await eventually(
    what,
    async () => {
      const s = await snapshot(clusters, waves.flat());
      seen = s;
      waves.forEach((wave, index) => {
        for (const cluster of wave) {
          if (s[cluster]?.image !== image) continue;
          for (const earlier of waves.slice(0, index).flat())
            if (!healthyOn(s, earlier, image))
              violations.push(`${cluster} ran ${image} while ${earlier} was ${JSON.stringify(s[earlier])}`);
        }
      });
      return done(s) ? s : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; last seen ${JSON.stringify(seen)}`);
  });
  return { violations, last };
}

/**
 * The fleet tests' Rollout `web`: canary steps without pauses (a healthy canary finishes by itself, a stuck one
 * stops at a step the fleet can name) and an abort after `progressDeadlineSeconds` without progress.
 */
export function fleetRolloutYaml(
  image: string,
  options: { progressDeadlineSeconds: number; weights: readonly number[] },
): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 2
  revisionHistoryLimit: 3
  progressDeadlineSeconds: ${options.progressDeadlineSeconds}
  progressDeadlineAbort: true
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: app
          image: ${image}
  strategy:
    canary:
      scaleDownDelaySeconds: 0
      steps:
${options.weights.map((weight) => `        - setWeight: ${weight}`).join('\n')}
`;
}
