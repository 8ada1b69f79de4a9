// `rollgate get rollout`'s view: the header facts and the revision → ReplicaSet → pod tree (with AnalysisRuns), as Argo's plugin shows them.
import type {
  ObservedAnalysisRun,
  ObservedPod,
  ObservedReplicaSet,
  ObservedState,
} from '../rollout/index.ts';
// Not from rollout/index.ts: the barrel would bring the whole planner to `get rollout`.
import { POD_TEMPLATE_HASH_LABEL, SCALE_DOWN_DEADLINE_ANNOTATION } from '../rollout/rollout-action.ts';
import type { Rollout } from '../manifest/rollout.ts';
import type { AnalysisRunView } from './analysis-run-view.ts';
import { COMMIT_ANNOTATION, COMMIT_AUTHOR_ANNOTATION } from '../manifest/commit-annotations.ts';
import { drivenApiOfVersion, type DrivenGroup } from '../manifest/driven-api.ts';

/** A pod in the tree; `status` is what kubectl's STATUS column would say (Running, ImagePullBackOff, …). */
export interface PodNode {
  name: string;
  status: string;
  health: NodeHealth;
  createdAt?: string;
  readyContainers: number;
  containers: number;
  restarts: number;
}

/** How a node's status icon and colour are chosen. */
export type NodeHealth = 'healthy' | 'progressing' | 'paused' | 'degraded' | 'scaledDown' | 'unknown';

/** A ReplicaSet in the tree, with its role and its pods. */
export interface ReplicaSetNode {
  name: string;
  podTemplateHash: string;
  /** `Healthy`, `Progressing`, `Degraded` (a pod fails to start) or `ScaledDown`. */
  status: string;
  health: NodeHealth;
  createdAt: string;
  role?: 'stable' | 'canary' | 'active' | 'preview';
  /** The rollgate.dev/scale-down-deadline annotation, when set. */
  scaleDownDeadline?: string;
  desired: number;
  ready: number;
  pods: PodNode[];
}

/** An AnalysisRun in the tree, under the revision it measured. */
export interface AnalysisRunNode {
  name: string;
  status: string;
  health: NodeHealth;
  createdAt?: string;
  /** Measurement counts over all metrics, when the run's details were read. */
  successful?: number;
  failed?: number;
}

/**
 * One revision: its ReplicaSet and the AnalysisRuns of its pod template. Rollgate writes no revision
 * annotation, so revisions are numbered by the ReplicaSets' creation order (oldest 1).
 */
export interface RevisionNode {
  revision: number;
  podTemplateHash: string;
  /** The Git commit and its author the revision was created from (kept on its ReplicaSet), when synced from Git. */
  commit?: string;
  author?: string;
  replicaSets: ReplicaSetNode[];
  analysisRuns: AnalysisRunNode[];
}

/** Everything `rollgate get rollout` prints; `-o json` prints exactly this. */
export interface RolloutTree {
  name: string;
  namespace: string;
  createdAt?: string;
  status: string;
  health: NodeHealth;
  message?: string;
  strategy: 'Canary' | 'BlueGreen';
  /** Canary only: `index` of `count` steps (index = count when all are done). */
  step?: { index: number; count: number };
  /** Canary only: the weight the steps reached, and the weight the router was last set to. */
  setWeight?: number;
  actualWeight?: number;
  images: Array<{ image: string; roles: Array<'stable' | 'canary' | 'active' | 'preview'> }>;
  replicas: { desired: number; current: number; updated: number; ready: number; available: number };
  /** Newest first, as Argo lists them. */
  revisions: RevisionNode[];
  /** generation and status.observedGeneration agree: the status speaks of the spec as it is now. */
  observed: boolean;
}

/** Waiting reasons that mean a pod will not start without a change, not merely that it is slow. */
const FAILING_REASONS = new Set([
  'ImagePullBackOff',
  'ErrImagePull',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'InvalidImageName',
  'RunContainerError',
  'Error',
  'OOMKilled',
]);

const PHASE_HEALTH: Record<string, NodeHealth> = {
  Healthy: 'healthy',
  Progressing: 'progressing',
  Paused: 'paused',
  Degraded: 'degraded',
};

function podNode(pod: ObservedPod): PodNode {
  const reason = pod.containers
    .map((container) => container.waitingReason ?? (pod.ready ? undefined : container.terminatedReason))
    .find((found) => found !== undefined);
  const status = reason ?? pod.phase;
  const health: NodeHealth =
    reason !== undefined && FAILING_REASONS.has(reason)
      ? 'degraded'
      : pod.ready && pod.phase === 'Running'
        ? 'healthy'
        : pod.phase === 'Succeeded'
          ? 'scaledDown'
          : 'progressing';
  const node: PodNode = {
    name: pod.name,
    status,
    health,
    // The observed pod says whether the pod is Ready, not which containers are: a Ready pod has them all.
    readyContainers: pod.ready ? pod.containers.length : 0,
    containers: pod.containers.length,
    restarts: pod.containers.reduce((sum, container) => sum + container.restartCount, 0),
  };
  if (pod.creationTimestamp !== undefined) node.createdAt = pod.creationTimestamp;
  return node;
}

function replicaSetNode(
  rs: ObservedReplicaSet,
  pods: PodNode[],
  role: ReplicaSetNode['role'],
): ReplicaSetNode {
  const { replicas: current, readyReplicas: ready, availableReplicas: available } = rs.status;
  const [status, health]: [string, NodeHealth] =
    rs.replicas === 0 && current === 0
      ? ['ScaledDown', 'scaledDown']
      : pods.some((pod) => pod.health === 'degraded')
        ? ['Degraded', 'degraded']
        : current === rs.replicas && ready >= rs.replicas && available >= rs.replicas
          ? ['Healthy', 'healthy']
          : ['Progressing', 'progressing'];
  const node: ReplicaSetNode = {
    name: rs.name,
    podTemplateHash: rs.podTemplateHash,
    status,
    health,
    createdAt: rs.creationTimestamp,
    desired: rs.replicas,
    ready,
    pods,
  };
  if (role !== undefined) node.role = role;
  const deadline = rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION];
  if (deadline !== undefined) node.scaleDownDeadline = deadline;
  return node;
}

function analysisRunNode(run: ObservedAnalysisRun, details: AnalysisRunView | undefined): AnalysisRunNode {
  const health: NodeHealth =
    run.phase === 'Successful'
      ? 'healthy'
      : run.phase === 'Failed' || run.phase === 'Error'
        ? 'degraded'
        : run.phase === 'Inconclusive'
          ? 'paused'
          : 'progressing';
  const node: AnalysisRunNode = { name: run.name, status: run.phase, health };
  if (run.creationTimestamp !== undefined) node.createdAt = run.creationTimestamp;
  if (details !== undefined) {
    node.successful = details.metrics.reduce((sum, metric) => sum + metric.successful, 0);
    node.failed = details.metrics.reduce((sum, metric) => sum + metric.failed + metric.error, 0);
  }
  return node;
}

/** The images of a pod template (`spec.containers[].image`), in order. */
function templateImages(template: object): string[] {
  const containers = (template as { spec?: { containers?: Array<{ image?: unknown }> } }).spec?.containers;
  return (containers ?? []).map((c) => c.image).filter((image): image is string => typeof image === 'string');
}

/** The weight the steps up to `index` (exclusive of later ones) set: the last setWeight at or before it. */
function stepWeight(steps: ReadonlyArray<Record<string, unknown>>, index: number): number {
  if (index >= steps.length) return 100;
  let weight = 0;
  for (const step of steps.slice(0, index + 1)) {
    if (typeof step.setWeight === 'number') weight = step.setWeight;
  }
  return weight;
}

/**
 * Builds the tree from what the reconciler reads (pure: tests call it without a cluster). `details`
 * adds each AnalysisRun's measurement counts.
 */
export function buildRolloutTree(observed: ObservedState, details: AnalysisRunView[] = []): RolloutTree {
  const { rollout } = observed;
  const status = rollout.status ?? {};
  const blueGreen = rollout.spec.strategy.blueGreen !== undefined;
  const roleOf = (hash: string): ReplicaSetNode['role'] => {
    if (hash === status.stableRS) return blueGreen ? 'active' : 'stable';
    if (hash === status.currentPodHash) return blueGreen ? 'preview' : 'canary';
    return undefined;
  };
  const podsByHash = new Map<string, PodNode[]>();
  for (const pod of observed.pods) {
    const list = podsByHash.get(pod.podTemplateHash) ?? [];
    list.push(podNode(pod));
    podsByHash.set(pod.podTemplateHash, list);
  }
  const byAge = <T extends { createdAt?: string; name: string }>(a: T, b: T): number =>
    (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || a.name.localeCompare(b.name);
  const sets = [...observed.replicaSets].sort(
    (a, b) => a.creationTimestamp.localeCompare(b.creationTimestamp) || a.name.localeCompare(b.name),
  );
  const revisions: RevisionNode[] = [];
  for (const rs of sets) {
    const pods = (podsByHash.get(rs.podTemplateHash) ?? []).sort(byAge);
    let revision = revisions.find((candidate) => candidate.podTemplateHash === rs.podTemplateHash);
    if (revision === undefined) {
      revision = {
        revision: revisions.length + 1,
        podTemplateHash: rs.podTemplateHash,
        replicaSets: [],
        analysisRuns: [],
      };
      const commit = rs.annotations[COMMIT_ANNOTATION];
      const author = rs.annotations[COMMIT_AUTHOR_ANNOTATION];
      if (commit !== undefined) revision.commit = commit;
      if (author !== undefined) revision.author = author;
      revisions.push(revision);
    }
    revision.replicaSets.push(replicaSetNode(rs, pods, roleOf(rs.podTemplateHash)));
  }
  const detailsByName = new Map(details.map((run) => [run.name, run]));
  for (const run of observed.analysisRuns) {
    const revision = revisions.find(
      (candidate) => candidate.podTemplateHash === run.labels[POD_TEMPLATE_HASH_LABEL],
    );
    revision?.analysisRuns.push(analysisRunNode(run, detailsByName.get(run.name)));
  }
  for (const revision of revisions) revision.analysisRuns.sort(byAge);

  const images: RolloutTree['images'] = [];
  for (const rs of sets) {
    const role = roleOf(rs.podTemplateHash);
    if (role === undefined) continue;
    for (const image of templateImages(rs.template)) {
      const entry = images.find((candidate) => candidate.image === image);
      if (entry === undefined) images.push({ image, roles: [role] });
      else if (!entry.roles.includes(role)) entry.roles.push(role);
    }
  }
  // Stable first, as Argo lists them.
  images.sort((a, b) => Number(!a.roles.includes('stable')) - Number(!b.roles.includes('stable')));

  const phase = status.phase ?? 'Unknown';
  const generation = rollout.metadata.generation;
  const tree: RolloutTree = {
    name: rollout.metadata.name,
    namespace: rollout.metadata.namespace ?? 'default',
    status: phase,
    health: PHASE_HEALTH[phase] ?? 'unknown',
    strategy: blueGreen ? 'BlueGreen' : 'Canary',
    images,
    replicas: {
      desired: rollout.spec.replicas ?? 1,
      current: status.replicas ?? observed.pods.length,
      updated: status.updatedReplicas ?? 0,
      ready: status.readyReplicas ?? 0,
      available: status.availableReplicas ?? 0,
    },
    revisions: revisions.reverse(),
    observed: generation === undefined || String(status.observedGeneration ?? '') === String(generation),
  };
  if (rollout.metadata.creationTimestamp !== undefined) tree.createdAt = rollout.metadata.creationTimestamp;
  if (status.message) tree.message = status.message;
  if (!blueGreen) {
    const steps = (rollout.spec.strategy.canary?.steps ?? []) as Array<Record<string, unknown>>;
    const index = Math.min(status.currentStepIndex ?? 0, steps.length);
    if (steps.length > 0) tree.step = { index, count: steps.length };
    // Fully promoted, the canary is the stable: all traffic goes to the current revision.
    const promoted = status.stableRS !== undefined && status.stableRS === status.currentPodHash;
    tree.setWeight = promoted ? 100 : stepWeight(steps, index);
    tree.actualWeight = promoted ? 100 : (status.canary?.weights?.canary.weight ?? 0);
  }
  return tree;
}

/**
 * Where `--until-complete` stands: `healthy` once the status describes the current spec and is Healthy,
 * `degraded` once it is Degraded (an abort, a progress deadline), `waiting` otherwise.
 */
export function completion(tree: RolloutTree): 'healthy' | 'degraded' | 'waiting' {
  if (!tree.observed) return 'waiting';
  if (tree.status === 'Healthy') return 'healthy';
  if (tree.status === 'Degraded') return 'degraded';
  return 'waiting';
}

/** One row of `list rollouts`: what Argo's plugin shows, read from the Rollout alone. */
export interface RolloutListRow {
  namespace: string;
  name: string;
  /** The API group the Rollout lives in: rollgate.dev, or argoproj.io (controller mode). */
  group: DrivenGroup;
  strategy: 'Canary' | 'BlueGreen';
  status: string;
  health: NodeHealth;
  /** `i/n` for a canary with steps, `-` otherwise. */
  step: string;
  /** `-` for blue-green. */
  setWeight: string;
  ready: number;
  desired: number;
  upToDate: number;
  available: number;
}

/** What `list rollouts -o wide` adds to a row: the images the spec asks for and when the Rollout was made. */
export interface RolloutListWideFacts {
  images: string[];
  createdAt?: string;
}

/** The wide facts of one Rollout, from its spec and metadata alone. */
export function rolloutListWideFacts(rollout: Rollout): RolloutListWideFacts {
  const containers = (rollout.spec.template?.spec?.containers ?? []) as Array<{ image?: string }>;
  const facts: RolloutListWideFacts = {
    images: containers.map((container) => container.image ?? '').filter((image) => image !== ''),
  };
  if (rollout.metadata.creationTimestamp !== undefined)
    facts.createdAt = String(rollout.metadata.creationTimestamp);
  return facts;
}

/** The list row of one Rollout, from its spec and status only (no ReplicaSet is read for a list). */
export function rolloutListRow(rollout: Rollout): RolloutListRow {
  const status = rollout.status ?? {};
  const phase = status.phase ?? 'Unknown';
  const blueGreen = rollout.spec.strategy.blueGreen !== undefined;
  const steps = (rollout.spec.strategy.canary?.steps ?? []) as Array<Record<string, unknown>>;
  const index = Math.min(status.currentStepIndex ?? 0, steps.length);
  const promoted = status.stableRS !== undefined && status.stableRS === status.currentPodHash;
  return {
    namespace: rollout.metadata.namespace ?? 'default',
    name: rollout.metadata.name,
    group: drivenApiOfVersion(rollout.apiVersion).group,
    strategy: blueGreen ? 'BlueGreen' : 'Canary',
    status: phase,
    health: PHASE_HEALTH[phase] ?? 'unknown',
    step: blueGreen || steps.length === 0 ? '-' : `${index}/${steps.length}`,
    setWeight: blueGreen ? '-' : String(promoted ? 100 : stepWeight(steps, index)),
    ready: status.readyReplicas ?? 0,
    desired: rollout.spec.replicas ?? 1,
    upToDate: status.updatedReplicas ?? 0,
    available: status.availableReplicas ?? 0,
  };
}
