// Test harness: a sandbox on a ManualClock with our CRDs, a Rollout in it, and a reconcile loop that checks invariants after every call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../../src/clock/clock.ts';
import { createKubeClients, objectReadsOf, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { ObservedStateReader, type RolloutKey } from '../../../src/reconciler/observed-state-reader.ts';
import { ReconcileRetryError } from '../../../src/reconciler/reconcile-retry-error.ts';
import {
  reconcileRollout,
  type ReconcileDeps,
  type ReconcileOutcome,
  type ReconcileStats,
} from '../../../src/reconciler/reconcile-rollout.ts';
import type { TrafficRouter } from '../../../src/reconciler/traffic-router.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { DEFAULT_RETRY_BACKOFF, jobRetryDelayMs } from '../../../src/queue/retry-backoff.ts';
import { resolveReplicaBudget } from '../../../src/rollout/canary-replica-counts.ts';
import {
  SCALE_DOWN_DEADLINE_ANNOTATION,
  podTemplateHash,
  type ObservedState,
} from '../../../src/rollout/index.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../../src/sandbox/index.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { argoCrds, rollgateCrds } from '../../../src/manifest/crds.ts';
import { ARGO_API, ROLLGATE_API, type DrivenApi } from '../../../src/manifest/driven-api.ts';

export const NAMESPACE = 'default';

/**
 * The groups a field-failure scenario runs in: Rollgate's own and Argo's (controller mode), so each
 * failure is held for the Rollouts Argo CD or Flux apply too (`describe.each(DRIVEN_APIS)`).
 */
export const DRIVEN_APIS: ReadonlyArray<{ group: DrivenApi['group']; api: DrivenApi }> = [
  { group: ROLLGATE_API.group, api: ROLLGATE_API },
  { group: ARGO_API.group, api: ARGO_API },
];

/** Options of a test Rollout; the template's image and sandbox behaviour are what tests vary. */
export interface TestRolloutOptions {
  name?: string;
  replicas?: number;
  image?: string;
  behavior?: string;
  steps?: unknown[];
  progressDeadlineSeconds?: number;
  progressDeadlineAbort?: boolean;
  scaleDownDelaySeconds?: number;
  abortScaleDownDelaySeconds?: number;
  canaryService?: string;
  stableService?: string;
  maxSurge?: number | string;
  maxUnavailable?: number | string;
  minReadySeconds?: number;
}

/** A Rollout object as `kubectl apply` would send it (rollgate.dev group). */
export function testRollout(options: TestRolloutOptions = {}): Record<string, unknown> {
  const name = options.name ?? 'web';
  const annotations: Record<string, string> = {};
  if (options.behavior) annotations['sandbox.rollgate.dev/behavior'] = options.behavior;
  const canary: Record<string, unknown> = {
    steps: options.steps ?? [
      { setWeight: 20 },
      { pause: { duration: '10s' } },
      { setWeight: 60 },
      { pause: { duration: '10s' } },
    ],
  };
  if (options.scaleDownDelaySeconds !== undefined)
    canary.scaleDownDelaySeconds = options.scaleDownDelaySeconds;
  if (options.abortScaleDownDelaySeconds !== undefined)
    canary.abortScaleDownDelaySeconds = options.abortScaleDownDelaySeconds;
  if (options.canaryService) canary.canaryService = options.canaryService;
  if (options.stableService) canary.stableService = options.stableService;
  if (options.maxSurge !== undefined) canary.maxSurge = options.maxSurge;
  if (options.maxUnavailable !== undefined) canary.maxUnavailable = options.maxUnavailable;
  const spec: Record<string, unknown> = {
    replicas: options.replicas ?? 3,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name }, annotations },
      spec: { containers: [{ name: 'app', image: options.image ?? 'app:1.0' }] },
    },
    strategy: { canary },
  };
  if (options.progressDeadlineSeconds !== undefined)
    spec.progressDeadlineSeconds = options.progressDeadlineSeconds;
  if (options.progressDeadlineAbort !== undefined) spec.progressDeadlineAbort = options.progressDeadlineAbort;
  if (options.minReadySeconds !== undefined) spec.minReadySeconds = options.minReadySeconds;
  return {
    apiVersion: ROLLGATE_API_VERSION,
    kind: 'Rollout',
    metadata: { name, namespace: NAMESPACE },
    spec,
  };
}

/** One invariant violation, with the moment and state it was seen in. */
export interface InvariantViolation {
  at: string;
  message: string;
}

/**
 * The invariants on one observed state:
 * pods ≤ replicas + maxSurge; available ≥ replicas − maxUnavailable while stable is healthy;
 * at most one canary ReplicaSet with pods; the scale-down-deadline annotation never empty.
 */
export function checkInvariants(observed: ObservedState, stableWasHealthy: boolean): string[] {
  const problems: string[] = [];
  const { rollout } = observed;
  const replicas = rollout.spec.replicas ?? 1;
  const canary = rollout.spec.strategy.canary;
  const budget = resolveReplicaBudget(replicas, canary?.maxSurge ?? '25%', canary?.maxUnavailable ?? '25%');
  const specTotal = observed.replicaSets.reduce((sum, rs) => sum + rs.replicas, 0);
  const ceiling = replicas + budget.maxSurge;
  if (specTotal > ceiling)
    problems.push(`ReplicaSets ask for ${specTotal} pods, more than ${ceiling} (replicas + maxSurge)`);
  if (observed.pods.length > ceiling) problems.push(`${observed.pods.length} pods run, more than ${ceiling}`);
  const status = rollout.status ?? {};
  if (stableWasHealthy && status.abort !== true) {
    const available = observed.replicaSets.reduce((sum, rs) => sum + rs.status.availableReplicas, 0);
    const floor = replicas - budget.maxUnavailable;
    if (available < floor)
      problems.push(`${available} pods available, fewer than ${floor} (replicas - maxUnavailable)`);
  }
  const canaries = observed.replicaSets.filter(
    (rs) =>
      rs.podTemplateHash !== status.stableRS &&
      rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION] === undefined &&
      rs.replicas > 0,
  );
  if (canaries.length > 1)
    problems.push(
      `${canaries.length} canary ReplicaSets run pods: ${canaries.map((rs) => rs.name).join(', ')}`,
    );
  for (const rs of observed.replicaSets) {
    const value = rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION];
    if (value !== undefined && (value === '' || Number.isNaN(Date.parse(value))))
      problems.push(`${rs.name} has ${SCALE_DOWN_DEADLINE_ANNOTATION}=${JSON.stringify(value)}`);
  }
  return problems;
}

export interface HarnessOptions extends SandboxOptions {
  router?: TrafficRouter;
  /** The API group the reconcile passes drive (default rollgate.dev); argoproj.io installs Argo's CRDs too. */
  api?: DrivenApi;
}

/**
 * What the queue does with one reconcile job: its outcome, or, when it threw a {@link ReconcileRetryError},
 * a retry after the queue's backoff (as startWorker computes it, jitter fixed at the middle).
 */
export type JobResult = ReconcileOutcome | { kind: 'retry'; afterMs: number; error: ReconcileRetryError };

/** A sandbox with our CRDs, clients on it, and a reconcile loop on the same ManualClock. */
export class ReconcileHarness {
  readonly violations: InvariantViolation[] = [];
  readonly outcomes: ReconcileOutcome[] = [];
  writes = 0;
  conflicts = 0;
  reconciles = 0;
  /** Reconcile calls that threw for the queue to retry. */
  retries = 0;
  /** Rollouts whose stable ReplicaSet has had all its pods available: the availability floor applies from then on. */
  readonly stableWasHealthy = new Set<string>();
  /** What the invariant check read after the last reconcile of each rollout. */
  readonly lastObserved = new Map<string, ObservedState>();
  /** The reconcile entry point the harness drives (tests swap in the analysis-measuring one). */
  reconcileImpl: (key: RolloutKey, deps: ReconcileDeps) => Promise<ReconcileOutcome> = reconcileRollout;
  /** Consecutive retries per rollout (the queue's attemptsMade; a job that does not throw resets it). */
  private readonly attempts = new Map<string, number>();

  private constructor(
    readonly sandbox: Sandbox,
    readonly clock: ManualClock,
    readonly clients: KubeClients,
    private readonly router: TrafficRouter | undefined,
    private readonly drivenApi: DrivenApi | undefined = undefined,
  ) {}

  /** The API the passes drive and the harness writes Rollouts in (rollgate.dev unless started with `api`). */
  get api(): DrivenApi {
    return this.drivenApi ?? ROLLGATE_API;
  }

  static async start(options: HarnessOptions = {}): Promise<ReconcileHarness> {
    const clock =
      options.clock instanceof ManualClock ? options.clock : new ManualClock(Date.UTC(2026, 0, 1));
    const sandbox = await startSandbox({ readyDelayMs: 1000, ...options, clock });
    const clients = createKubeClients(sandbox.kubeConfig);
    await installCrds(clients, rollgateCrds());
    if (options.api?.group === 'argoproj.io') await installCrds(clients, argoCrds());
    await sandbox.settle();
    return new ReconcileHarness(sandbox, clock, clients, options.router, options.api);
  }

  /** A temporary folder the harness removes on stop, made by the first writeKubeconfig. */
  private tmp: string | undefined;

  /**
   * Writes a kubeconfig for the sandbox (for the CLI and kubectl) into a temporary folder that `stop()`
   * removes; the folder is the test's for other files too.
   */
  async writeKubeconfig(): Promise<{ kubeconfig: string; dir: string }> {
    this.tmp ??= mkdtempSync(join(tmpdir(), 'rollgate-harness-'));
    const kubeconfig = join(this.tmp, 'kubeconfig');
    await this.sandbox.writeKubeconfig(kubeconfig);
    return { kubeconfig, dir: this.tmp };
  }

  async stop(): Promise<void> {
    await this.sandbox.stop();
    if (this.tmp !== undefined) rmSync(this.tmp, { recursive: true, force: true });
  }

  /** Creates a Rollout in the harness's group (the object's apiVersion is set to it). */
  async createRollout(object: Record<string, unknown>): Promise<RolloutKey> {
    const metadata = object.metadata as { name: string; namespace: string };
    await this.clients.custom.createNamespacedCustomObject({
      group: this.api.group,
      version: this.api.version,
      namespace: metadata.namespace,
      plural: this.api.plurals.rollouts,
      body: { ...object, apiVersion: this.api.apiVersion },
    });
    return { namespace: metadata.namespace, name: metadata.name };
  }

  async createService(name: string, selector: Record<string, string>): Promise<void> {
    await this.clients.core.createNamespacedService({
      namespace: NAMESPACE,
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name },
        spec: { selector, ports: [{ port: 80 }] },
      },
    });
  }

  /** Reads the live Rollout object (plain JSON). */
  async rollout(
    key: RolloutKey,
  ): Promise<Record<string, unknown> & { spec: Record<string, unknown>; status?: Record<string, unknown> }> {
    return (await this.clients.custom.getNamespacedCustomObject({
      group: this.api.group,
      version: this.api.version,
      plural: this.api.plurals.rollouts,
      ...key,
    })) as Record<string, unknown> & { spec: Record<string, unknown>; status?: Record<string, unknown> };
  }

  async observe(key: RolloutKey): Promise<ObservedState> {
    // The reconciler's own reads (plain where its writes are), as its passes read.
    const read = await new ObservedStateReader(objectReadsOf(this.clients), undefined, this.drivenApi).read(
      key,
    );
    if (read === undefined) throw new Error(`rollout ${key.name} is gone`);
    return read.observed;
  }

  /** Merge-patches the Rollout spec (a new revision, replicas, pause…) as a user or Git sync would. */
  async patchSpec(key: RolloutKey, spec: Record<string, unknown>): Promise<void> {
    const { MERGE_PATCH } = await import('../../../src/kube/client.ts');
    await this.clients.custom.patchNamespacedCustomObject(
      {
        group: this.api.group,
        version: this.api.version,
        plural: this.api.plurals.rollouts,
        ...key,
        body: { spec },
      },
      MERGE_PATCH,
    );
  }

  deps(extra: Partial<ReconcileDeps> = {}): ReconcileDeps {
    return {
      clients: this.clients,
      clock: this.clock,
      logger: silentLogger,
      ...(this.router ? { router: this.router } : {}),
      ...(this.drivenApi ? { api: this.drivenApi } : {}),
      ...extra,
    };
  }

  /**
   * One reconcile call. The invariants are checked on the state every pass read (so after every
   * write the reconciler made, as the next pass saw it); with `verify` a fresh read after the call
   * is checked too, also when the call threw for the queue to retry (which it rethrows).
   */
  async reconcile(
    key: RolloutKey,
    extra: Partial<ReconcileDeps> = {},
    verify = true,
  ): Promise<ReconcileOutcome> {
    const id = `${key.namespace}/${key.name}`;
    try {
      const outcome = await this.reconcileImpl(
        key,
        this.deps({
          onPass: ({ observed }) => {
            this.lastObserved.set(id, observed);
            this.checkObserved(key, observed);
          },
          ...extra,
        }),
      );
      this.outcomes.push(outcome);
      this.count(outcome.stats);
      return outcome;
    } catch (err) {
      if (err instanceof ReconcileRetryError) {
        this.retries += 1;
        this.count(err.stats);
      }
      throw err;
    } finally {
      this.reconciles += 1;
      if (verify) {
        await this.sandbox.settle();
        await this.check(key);
      }
    }
  }

  /**
   * One reconcile job as the queue runs it: `run` (by default {@link reconcile}), and a thrown
   * {@link ReconcileRetryError} turned into the retry the queue would schedule.
   */
  async job(
    key: RolloutKey,
    run: () => Promise<ReconcileOutcome> = () => this.reconcile(key),
  ): Promise<JobResult> {
    const id = `${key.namespace}/${key.name}`;
    try {
      const outcome = await run();
      this.attempts.delete(id);
      return outcome;
    } catch (err) {
      if (!(err instanceof ReconcileRetryError)) throw err;
      const attempt = (this.attempts.get(id) ?? 0) + 1;
      this.attempts.set(id, attempt);
      return {
        kind: 'retry',
        afterMs: jobRetryDelayMs(attempt, DEFAULT_RETRY_BACKOFF, err, () => 0.5),
        error: err,
      };
    }
  }

  private count(stats: ReconcileStats | undefined): void {
    this.writes += stats?.writes ?? 0;
    this.conflicts += stats?.conflicts ?? 0;
  }

  private checkObserved(key: RolloutKey, observed: ObservedState): void {
    const id = `${key.namespace}/${key.name}`;
    const status = observed.rollout.status ?? {};
    const stable = observed.replicaSets.find((rs) => rs.podTemplateHash === status.stableRS);
    if (
      stable &&
      stable.replicas > 0 &&
      stable.status.availableReplicas >= (observed.rollout.spec.replicas ?? 1)
    )
      this.stableWasHealthy.add(id);
    for (const message of checkInvariants(observed, this.stableWasHealthy.has(id)))
      this.violations.push({ at: this.clock.now().toISOString(), message: `${key.name}: ${message}` });
  }

  async check(key: RolloutKey): Promise<void> {
    const faults = { ...this.sandbox.faults };
    Object.assign(this.sandbox.faults, { conflictRate: 0, errorRate: 0 });
    try {
      const observed = await this.observe(key);
      this.lastObserved.set(`${key.namespace}/${key.name}`, observed);
      this.checkObserved(key, observed);
    } finally {
      Object.assign(this.sandbox.faults, faults);
    }
  }

  /**
   * Drives the rollout like the queue would: one job, then let time pass until its requeue or retry
   * asks (at most `stepMs`, as a watch event would, at least 100 ms), until `done(observed)` or
   * `timeoutMs` of fake time. Returns the fake milliseconds it took.
   */
  async runUntil(
    key: RolloutKey,
    done: (observed: ObservedState) => boolean,
    options: { timeoutMs?: number; stepMs?: number; extra?: Partial<ReconcileDeps> } = {},
  ): Promise<number> {
    const start = this.clock.now().getTime();
    const timeoutMs = options.timeoutMs ?? 600_000;
    const stepMs = options.stepMs ?? 1_000;
    for (;;) {
      const outcome = await this.job(key, () => this.reconcile(key, options.extra));
      const observed = this.lastObserved.get(`${key.namespace}/${key.name}`);
      if (observed === undefined) throw new Error(`rollout ${key.name} was not observed`);
      if (done(observed)) return this.clock.now().getTime() - start;
      const elapsed = this.clock.now().getTime() - start;
      if (elapsed > timeoutMs)
        throw new Error(
          `not done after ${elapsed} ms of fake time; status ${JSON.stringify(observed.rollout.status)}; last outcome ${JSON.stringify(outcome)}`,
        );
      const wait = 'afterMs' in outcome ? Math.min(Math.max(outcome.afterMs, 100), stepMs) : stepMs;
      await this.sandbox.advance(wait);
    }
  }
}

/** The rollout finished: stable is the desired template's hash, and every other ReplicaSet is at 0. */
export function isFullyPromoted(observed: ObservedState): boolean {
  const status = observed.rollout.status ?? {};
  const desired = podTemplateHash(observed.rollout.spec.template, status.collisionCount);
  if (status.phase !== 'Healthy' || status.stableRS !== desired || status.currentPodHash !== desired)
    return false;
  const replicas = observed.rollout.spec.replicas ?? 1;
  const stable = observed.replicaSets.find((rs) => rs.podTemplateHash === status.stableRS);
  return (
    stable !== undefined &&
    stable.status.availableReplicas === replicas &&
    observed.replicaSets.every((rs) => rs === stable || (rs.replicas === 0 && rs.status.replicas === 0))
  );
}
