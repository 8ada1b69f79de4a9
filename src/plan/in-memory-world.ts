// A tiny in-memory cluster around the pure planner: applies RolloutActions, runs pods, keeps fake time (`rollgate plan` and the planner tests).
import type { Rollout } from '../manifest/rollout.ts';
import { copyJson } from '../rollout/json-copy.ts';
import {
  EPHEMERAL_METADATA_ANNOTATION,
  POD_TEMPLATE_HASH_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  sameJson,
  planRollout,
  type ObservedAnalysisRun,
  type ObservedPod,
  type ObservedReplicaSet,
  type ObservedState,
  type ReassertTrafficWeightsAction,
  type RolloutAction,
  type RolloutPlan,
  type SetTrafficWeightsAction,
} from '../rollout/index.ts';

/** How a simulated pod of an image behaves. */
export type PodBehaviour =
  | { kind: 'healthy'; readyAfterMs: number }
  | { kind: 'imagePullBackOff' }
  | { kind: 'crashLoop'; upMs: number; downMs: number };

interface SimPod {
  name: string;
  hash: string;
  image: string;
  createdAt: number;
}

interface SimReplicaSet {
  rs: ObservedReplicaSet;
  image: string;
  pods: SimPod[];
}

export interface WorldOptions {
  rollout: Rollout;
  start?: number;
  /** Pod behaviour per image (default: healthy, ready after 2 s). */
  behaviour?: (image: string) => PodBehaviour;
  /** Phase an analysis run reaches after `analysisMs` (default Successful). */
  analysisResult?: (runName: string) => ObservedAnalysisRun['phase'];
  analysisMs?: number;
  services?: Array<{ name: string; selector: Record<string, string> }>;
  /** Makes every setTrafficWeights fail with this error. */
  routerError?: string;
  /**
   * Injected failures, like 409s: called before each write; true makes it fail, which stops the pass
   * there (the status is not written), as the executor does. Called once more for the status write.
   */
  fail?: (what: RolloutAction['kind'] | 'status') => boolean;
}

/** The weights the simulated router holds. */
export interface RoutedWeights {
  canaryWeight: number;
  stableHash: string;
  canaryHash?: string | undefined;
}

/**
 * What the last pass's writes did, as the executor reports it: `changed` counts the writes that changed
 * something (a write equal to what is there is skipped, a failed router call changes nothing, Events are
 * not counted); `statusChanged` says whether the status write changed the status; `refused` is set when a
 * write was refused (an injected failure or a stale resourceVersion), which stops the pass there, as a
 * 409 does.
 */
export interface PassWrites {
  changed: number;
  statusChanged: boolean;
  refused: boolean;
}

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

/** The in-memory world: one rollout and what it owns. */
export class InMemoryWorld {
  now: number;
  rollout: Rollout;
  readonly sets = new Map<string, SimReplicaSet>();
  readonly runs = new Map<string, ObservedAnalysisRun & { createdAt: number }>();
  readonly services = new Map<string, { resourceVersion: string; selector: Record<string, string> }>();
  readonly events: Array<{ type: string; reason: string; message: string }> = [];
  /** Every write that changed something, in order. */
  readonly writes: RolloutAction[] = [];
  /** What the router holds; undefined until the first weights are sent. */
  routed: RoutedWeights | undefined;
  trafficError: string | undefined;
  /** What the last applied pass wrote. */
  lastPass: PassWrites = { changed: 0, statusChanged: false, refused: false };
  /** Writes refused by the injected `fail`. */
  conflicts = 0;
  private version = 100;
  private podSeq = 0;
  private readonly options: WorldOptions;

  constructor(options: WorldOptions) {
    this.options = options;
    this.now = options.start ?? Date.UTC(2026, 0, 1);
    this.rollout = copyJson(options.rollout);
    for (const service of options.services ?? []) {
      this.services.set(service.name, { resourceVersion: '1', selector: { ...service.selector } });
    }
  }

  private nextVersion(): string {
    this.version += 1;
    return String(this.version);
  }

  private behaviour(image: string): PodBehaviour {
    return this.options.behaviour?.(image) ?? { kind: 'healthy', readyAfterMs: 2000 };
  }

  private podReady(pod: SimPod): boolean {
    const behaviour = this.behaviour(pod.image);
    const age = this.now - pod.createdAt;
    if (behaviour.kind === 'healthy') return age >= behaviour.readyAfterMs;
    if (behaviour.kind === 'imagePullBackOff') return false;
    const cycle = behaviour.upMs + behaviour.downMs;
    return age % cycle >= behaviour.downMs;
  }

  private observedPod(pod: SimPod): ObservedPod {
    const behaviour = this.behaviour(pod.image);
    const ready = this.podReady(pod);
    const container: ObservedPod['containers'][number] = { name: 'app', image: pod.image, restartCount: 0 };
    if (behaviour.kind === 'imagePullBackOff') {
      container.waitingReason = 'ImagePullBackOff';
      container.waitingMessage = `Back-off pulling image "${pod.image}"`;
    } else if (behaviour.kind === 'crashLoop') {
      const age = this.now - pod.createdAt;
      container.restartCount = Math.floor(age / (behaviour.upMs + behaviour.downMs));
      if (!ready) container.waitingReason = 'CrashLoopBackOff';
    }
    return {
      name: pod.name,
      uid: `uid-${pod.name}`,
      creationTimestamp: new Date(pod.createdAt).toISOString(),
      podTemplateHash: pod.hash,
      phase: 'Running',
      ready,
      containers: [container],
    };
  }

  /** The ReplicaSet controller: pods follow spec.replicas (unready pods are removed first). */
  private syncPods(): void {
    for (const set of this.sets.values()) {
      while (set.pods.length < set.rs.replicas) {
        this.podSeq += 1;
        set.pods.push({
          name: `${set.rs.name}-p${this.podSeq}`,
          hash: set.rs.podTemplateHash,
          image: set.image,
          createdAt: this.now,
        });
      }
      while (set.pods.length > set.rs.replicas) {
        const unready = set.pods.findIndex((pod) => !this.podReady(pod));
        set.pods.splice(unready === -1 ? set.pods.length - 1 : unready, 1);
      }
      const ready = set.pods.filter((pod) => this.podReady(pod)).length;
      set.rs.status = { replicas: set.pods.length, readyReplicas: ready, availableReplicas: ready };
    }
    for (const run of this.runs.values()) {
      if ((run.phase === 'Running' || run.phase === 'Pending') && !run.terminated) {
        if (this.now - run.createdAt >= (this.options.analysisMs ?? 5000)) {
          run.phase = this.options.analysisResult?.(run.name) ?? 'Successful';
        }
      }
    }
  }

  advance(ms: number): void {
    this.now += ms;
    this.syncPods();
  }

  observe(): ObservedState {
    this.syncPods();
    // The pods are built afresh for each observation; what the world keeps is copied, so a pass that edited
    // what it was handed would not edit the world.
    const pods = [...this.sets.values()].flatMap((set) => set.pods.map((pod) => this.observedPod(pod)));
    return {
      rollout: copyJson(this.rollout),
      replicaSets: [...this.sets.values()].map((set) => copyJson(set.rs)),
      pods,
      services: [...this.services.entries()].map(([name, s]) => ({ name, ...copyJson(s) })),
      analysisRuns: [...this.runs.values()].map(({ createdAt: _c, ...run }) => copyJson(run)),
      ...(this.trafficError !== undefined ? { traffic: { error: this.trafficError } } : {}),
    };
  }

  /** The canary weight the router holds (0 before any). */
  get trafficWeight(): number {
    return this.routed?.canaryWeight ?? 0;
  }

  /** Someone edits the routes by hand (`kubectl edit`): the router now holds `canaryWeight`. */
  editRoutes(canaryWeight: number): void {
    if (this.routed !== undefined) this.routed = { ...this.routed, canaryWeight };
  }

  /**
   * Applies actions in order, then the status. A write that would change nothing is skipped and a router
   * call fails with `routerError`, as the executor does; a refused write stops the pass there (the status
   * is not written). What the writes did is left in {@link lastPass}.
   */
  apply(plan: RolloutPlan): PassWrites {
    const pass: PassWrites = { changed: 0, statusChanged: false, refused: false };
    this.lastPass = pass;
    for (const action of plan.actions) {
      if (action.kind !== 'emitEvent' && this.options.fail?.(action.kind) === true) {
        this.conflicts += 1;
        pass.refused = true;
        return pass;
      }
      const result = this.write(action);
      if (result === 'refused') {
        pass.refused = true;
        return pass;
      }
      if (result === 'changed' && action.kind !== 'emitEvent') {
        pass.changed += 1;
        this.writes.push(action);
      }
    }
    if (this.options.fail?.('status') === true) {
      this.conflicts += 1;
      pass.refused = true;
      return pass;
    }
    if (plan.annotations !== undefined) {
      const annotations = { ...(this.rollout.metadata.annotations ?? {}), ...plan.annotations };
      this.rollout = { ...this.rollout, metadata: { ...this.rollout.metadata, annotations } };
    }
    pass.statusChanged = !sameJson(this.rollout.status ?? {}, plan.status);
    this.rollout = { ...this.rollout, status: copyJson(plan.status) };
    this.syncPods();
    return pass;
  }

  /** One write: whether it changed the world, changed nothing, or was refused (stale resourceVersion). */
  private write(action: RolloutAction): 'changed' | 'unchanged' | 'refused' {
    switch (action.kind) {
      case 'createReplicaSet': {
        if (this.sets.has(action.name)) return 'unchanged';
        const image = JSON.stringify(action.template).match(/"image":"([^"]+)"/)?.[1] ?? '?';
        this.sets.set(action.name, {
          image,
          pods: [],
          rs: {
            name: action.name,
            uid: `uid-${action.name}`,
            resourceVersion: this.nextVersion(),
            podTemplateHash: action.podTemplateHash,
            labels: action.labels,
            annotations: { ...action.annotations },
            replicas: action.replicas,
            status: { replicas: 0, readyReplicas: 0, availableReplicas: 0 },
            template: action.template,
            creationTimestamp: new Date(this.now).toISOString(),
            controlledByRollout: true,
          },
        });
        return 'changed';
      }
      case 'scaleReplicaSet': {
        const set = this.sets.get(action.name);
        if (set === undefined || set.rs.resourceVersion !== action.resourceVersion) return 'refused';
        const annotations = { ...set.rs.annotations };
        for (const [key, value] of Object.entries(action.annotations ?? {})) {
          if (value === null) delete annotations[key];
          else annotations[key] = value;
        }
        if (set.rs.replicas === action.replicas && sameRecord(annotations, set.rs.annotations))
          return 'unchanged';
        set.rs.replicas = action.replicas;
        set.rs.annotations = annotations;
        set.rs.resourceVersion = this.nextVersion();
        return 'changed';
      }
      case 'deleteReplicaSet':
        return this.sets.delete(action.name) ? 'changed' : 'unchanged';
      case 'setTrafficWeights':
      case 'reassertTrafficWeights':
        return this.route(action);
      case 'patchServiceSelector': {
        const service = this.services.get(action.service);
        if (service === undefined || service.resourceVersion !== action.resourceVersion) return 'refused';
        if (service.selector[POD_TEMPLATE_HASH_LABEL] === action.podTemplateHash) return 'unchanged';
        service.selector[POD_TEMPLATE_HASH_LABEL] = action.podTemplateHash;
        service.resourceVersion = this.nextVersion();
        return 'changed';
      }
      case 'createAnalysisRun':
        if (this.runs.has(action.name)) return 'unchanged';
        this.runs.set(action.name, {
          name: action.name,
          phase: 'Running',
          labels: action.labels,
          terminated: false,
          createdAt: this.now,
        });
        return 'changed';
      case 'terminateAnalysisRun': {
        const run = this.runs.get(action.name);
        if (run === undefined || run.terminated === true) return 'unchanged';
        run.terminated = true;
        return 'changed';
      }
      case 'deleteAnalysisRun':
        return this.runs.delete(action.name) ? 'changed' : 'unchanged';
      case 'evictPod': {
        // The ReplicaSet replaces the pod on the next sync, with a fresh creation time.
        let evicted = false;
        for (const set of this.sets.values()) {
          const kept = set.pods.filter((pod) => pod.name !== action.name);
          evicted ||= kept.length < set.pods.length;
          set.pods = kept;
        }
        return evicted ? 'changed' : 'unchanged';
      }
      case 'emitEvent':
        this.events.push({ type: action.type, reason: action.reason, message: action.message });
        return 'changed';
      case 'setReplicaSetPodMetadata': {
        const set = this.sets.get(action.name);
        if (set === undefined || set.rs.resourceVersion !== action.resourceVersion) return 'refused';
        const template = copyJson(set.rs.template) as {
          metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
        };
        const metadata = (template.metadata ??= {});
        for (const field of ['labels', 'annotations'] as const) {
          const map = { ...(metadata[field] ?? {}) };
          for (const [key, value] of Object.entries(action.template[field])) {
            if (value === null) delete map[key];
            else map[key] = value;
          }
          metadata[field] = map;
        }
        const annotations = { ...set.rs.annotations };
        if (action.recorded === null) delete annotations[EPHEMERAL_METADATA_ANNOTATION];
        else annotations[EPHEMERAL_METADATA_ANNOTATION] = action.recorded;
        set.rs = { ...set.rs, template, annotations, resourceVersion: this.nextVersion() };
        return 'changed';
      }
      // Pods' metadata is not simulated (their observed pods carry none, so none is asked for).
      case 'patchPodMetadata':
        return 'unchanged';
      // Header and mirror routes and the workloadRef Deployment are not simulated: taken as written.
      case 'setHeaderRoute':
      case 'setMirrorRoute':
      case 'scaleDeployment':
        return 'changed';
      // Experiments are not simulated: one created stays without a phase, so the step waits there.
      case 'createExperiment':
      case 'terminateExperiment':
        return 'unchanged';
    }
  }

  /**
   * The router: a failing one changes nothing (the error is what the executor records in status); one
   * that answers writes only when it held other weights. A reassert that had to write put back a hand
   * edit, reported as the executor does.
   */
  private route(action: SetTrafficWeightsAction | ReassertTrafficWeightsAction): 'changed' | 'unchanged' {
    if (this.options.routerError !== undefined) {
      this.trafficError = this.options.routerError;
      return 'unchanged';
    }
    this.trafficError = undefined;
    const wanted: RoutedWeights = {
      canaryWeight: action.canaryWeight,
      stableHash: action.stableHash,
      canaryHash: action.canaryHash,
    };
    const held = this.routed;
    if (
      held !== undefined &&
      held.canaryWeight === wanted.canaryWeight &&
      held.stableHash === wanted.stableHash &&
      held.canaryHash === wanted.canaryHash
    )
      return 'unchanged';
    this.routed = wanted;
    if (action.kind === 'reassertTrafficWeights')
      this.events.push({
        type: 'Warning',
        reason: 'TrafficDriftCorrected',
        message: `routes: weights edited outside Rollgate; set back to Rollgate's (canary ${action.canaryWeight})`,
      });
    return 'changed';
  }

  /** One reconcile pass at the current time. */
  reconcile(): RolloutPlan {
    // The observation holds a copy of the rollout already: the planner gets that one, as in the reconciler.
    const observed = this.observe();
    const plan = planRollout(observed.rollout, observed, new Date(this.now));
    this.apply(plan);
    return plan;
  }

  /** Sets a new pod template image (a new revision). */
  setImage(image: string): void {
    const spec = copyJson(this.rollout.spec);
    spec.template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image }] } };
    this.rollout = {
      ...this.rollout,
      metadata: { ...this.rollout.metadata, generation: (this.rollout.metadata.generation ?? 1) + 1 },
      spec,
    };
  }

  /** Changes spec fields other than the template (restartAt, paused, …), as `kubectl patch` would. */
  patchSpec(fields: Partial<Rollout['spec']>): void {
    this.rollout = {
      ...this.rollout,
      metadata: { ...this.rollout.metadata, generation: (this.rollout.metadata.generation ?? 1) + 1 },
      spec: { ...copyJson(this.rollout.spec), ...copyJson(fields) },
    };
  }

  /** Creation times (ms) of every pod, by ReplicaSet hash. */
  podAges(): Array<{ hash: string; name: string; createdAt: number }> {
    return [...this.sets.values()].flatMap((set) =>
      set.pods.map((pod) => ({ hash: pod.hash, name: pod.name, createdAt: pod.createdAt })),
    );
  }

  /** Patches status as the CLI does (promote, abort, retry). */
  patchStatus(patch: Record<string, unknown>): void {
    const status: Record<string, unknown> = { ...(this.rollout.status ?? {}) };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete status[key];
      else status[key] = value;
    }
    this.rollout = { ...this.rollout, status };
  }

  /** Total pods, available pods, and the annotations on every ReplicaSet. */
  totals(): { pods: number; available: number } {
    let pods = 0;
    let available = 0;
    for (const set of this.sets.values()) {
      pods += set.pods.length;
      available += set.pods.filter((pod) => this.podReady(pod)).length;
    }
    return { pods, available };
  }

  /** Available pods by pod-template hash, as the next pass will observe them (without copying a whole observation). */
  availableByHash(): Map<string, number> {
    this.syncPods();
    return new Map(
      [...this.sets.values()].map((set) => [set.rs.podTemplateHash, set.rs.status.availableReplicas]),
    );
  }

  /** ReplicaSets (by hash) that currently have pods. */
  hashesWithPods(): string[] {
    return [...this.sets.values()].filter((set) => set.pods.length > 0).map((set) => set.rs.podTemplateHash);
  }

  /** Every deadline annotation value currently stored. */
  deadlineAnnotations(): string[] {
    return [...this.sets.values()]
      .map((set) => set.rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION])
      .filter((value): value is string => value !== undefined);
  }
}
