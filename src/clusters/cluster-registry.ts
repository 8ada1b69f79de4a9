// The dynamic ClusterSet: registrations in, handles with their own connections out, each cluster probed on its own schedule.
import { VersionApi } from '@kubernetes/client-node';
import type { Clock } from '../clock/clock.ts';
import { makePooledApiClient, type KubeConnection } from '../kube/client.ts';
import type { RateLimitSettings } from '../kube/request-rate-limit.ts';
import type { Logger } from '../log/logger.ts';
import { connectionFromContext, connectionFromSpec, dropConnection, serverOf } from './cluster-connection.ts';
import { resolveRegistrations, sameTarget, type ClusterRegistration } from './cluster-registration.ts';
import type { ClusterEvent, ClusterHandle, ClusterOrigin, ClusterSet, ClusterState } from './cluster-set.ts';
import {
  classifyProbeError,
  DEFAULT_PROBE_SCHEDULE,
  nextClusterState,
  nextProbeDelayMs,
  type ProbeOutcome,
  type ProbeSchedule,
} from './cluster-state.ts';
import type { SecretRef } from './argocd-cluster-secret.ts';

/**
 * What one readiness check reports: the shape of server/'s ReadinessReport, written here so clusters/ does
 * not import server/ (which shows clusters).
 */
export interface ClusterReadinessReport {
  ok: boolean;
  detail?: string;
  blocksReadiness?: boolean;
}

/** A `/readyz` check: the shape of server/'s ReadinessCheck. */
export interface ClusterReadinessCheck {
  name: string;
  check: () => ClusterReadinessReport;
}

/** A cluster's state with where it was registered: what /readyz, the dashboard and `rollgate` show. */
export interface ClusterStatus extends ClusterState {
  readonly origin: ClusterOrigin;
  /** `kubernetes`, `clusters[2]`, `Secret argocd/prod`. */
  readonly declaredBy: string;
  /** The API server's address, when known (never a credential). */
  readonly server: string;
}

/** Hears a cluster's new state; `gone`: the refused registration it described was withdrawn. */
export type ClusterStateListener = (status: ClusterStatus, gone: boolean) => void;

/** Told of a registration problem or a probe's phase change on a Secret-registered cluster (for an Event). */
export type SecretProblemListener = (secret: SecretRef, status: ClusterStatus) => void;

/** The ClusterSet of a running process, with each cluster's state. */
export interface RunningClusterSet extends ClusterSet {
  /** The state of the cluster registered under `name` (a refused registration too), if any. */
  state(name: string): ClusterStatus | undefined;
  /** Every registration's state, refused ones included (a refused one may share a name with an active one). */
  states(): readonly ClusterStatus[];
  /**
   * Hears every change of `states()`: a probe that changed a phase or message, a registration refused, or
   * (`gone`) a refused registration that was withdrawn (an active cluster's removal is a `removed` event).
   */
  subscribeStates(listener: ClusterStateListener): () => void;
  /** Stops probing and watching, and closes every registered cluster's connection but the local one. */
  close(): Promise<void>;
}

/** Asks a cluster's API server something every credential may ask; throws what the request threw. */
export type ClusterProbe = (kube: KubeConnection) => Promise<void>;

/** GET /version: cheap, answered by every API server, and refused (401) for a bad or expired token. */
export const versionProbe: ClusterProbe = async (kube) => {
  await makePooledApiClient(kube.clients.kubeConfig, VersionApi).getCode();
};

export interface ClusterRegistryOptions {
  local: ClusterHandle;
  clock: Clock;
  logger: Logger;
  /** The per-cluster client-side rate limit (kubernetes.qps/burst): each cluster its own limiter. */
  rateLimit?: RateLimitSettings | undefined;
  /** The local kubeconfig file, where a configured context names none. */
  kubeconfig?: string | undefined;
  probe?: ClusterProbe;
  probeSchedule?: ProbeSchedule;
  /** How long one probe may take (default PROBE_TIMEOUT_MS). */
  probeTimeoutMs?: number;
  random?: () => number;
  /** Told after each probe, with the state and when the next probe is (undefined: none), as it starts waiting. */
  onProbed?: (state: ClusterState, nextInMs: number | undefined) => void;
  onSecretProblem?: SecretProblemListener;
}

interface Active {
  registration: ClusterRegistration;
  handle: ClusterHandle;
  prober: Prober;
}

/** One cluster's probe loop: probe, decide the state, wait on the clock, again, until stopped. */
interface Prober {
  state: ClusterState | undefined;
  stop(): void;
}

/**
 * Waits `ms` on the injected clock (a ManualClock moves only when told). A stopped prober's wait is left to
 * end into a no-op: the timer is unref'd, so it keeps nothing alive.
 */
function sleep(clock: Clock, ms: number): Promise<void> {
  const until = new Date(clock.now().getTime() + ms);
  if (clock.reach) return clock.reach(until);
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** How long one probe may take before it counts as no answer (a black-holed address never refuses). */
export const PROBE_TIMEOUT_MS = 10_000;

/** Thrown when a probe outlasts its time: classified as a network failure. */
export class ClusterProbeTimeoutError extends Error {
  override readonly name = 'ClusterProbeTimeoutError';
  readonly code = 'PROBE_TIMEOUT';
  constructor(ms: number) {
    super(`no answer within ${Math.round(ms / 1000)} s`);
  }
}

/** `probe`, or a ClusterProbeTimeoutError after `ms` of real time (I/O time, not the injected clock's). */
async function withTimeout(probe: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ClusterProbeTimeoutError(ms)), ms);
    timer.unref();
  });
  try {
    await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Keeps the clusters known now. Registrations arrive in groups (the configuration once, the Secrets at
 * every change): {@link ClusterRegistry.replace} takes a group's whole list, decides which registration
 * holds each name, builds a connection for each new or changed one, drops the connections of removed or
 * replaced ones, and tells listeners once `current()` reflects the change.
 */
export class ClusterRegistry implements RunningClusterSet {
  readonly localName: string;
  private readonly groups = new Map<string, readonly ClusterRegistration[]>();
  private readonly active = new Map<string, Active>();
  private refused: ClusterStatus[] = [];
  private readonly listeners = new Set<(event: ClusterEvent) => void>();
  private readonly stateListeners = new Set<ClusterStateListener>();
  private readonly probe: ClusterProbe;
  private readonly schedule: ProbeSchedule;
  private closed = false;

  constructor(private readonly options: ClusterRegistryOptions) {
    this.localName = options.local.name;
    this.probe = options.probe ?? versionProbe;
    this.schedule = options.probeSchedule ?? DEFAULT_PROBE_SCHEDULE;
    const registration: ClusterRegistration = {
      name: options.local.name,
      origin: 'local',
      declaredBy: 'kubernetes',
      problems: [],
      target: { kind: 'local' },
    };
    this.groups.set('local', [registration]);
    this.active.set(options.local.name, {
      registration,
      handle: options.local,
      prober: this.startProber(registration, options.local),
    });
  }

  local(): ClusterHandle {
    return this.options.local;
  }

  get(name: string): ClusterHandle | undefined {
    return this.active.get(name)?.handle;
  }

  current(): readonly ClusterHandle[] {
    return [...this.active.values()].map((entry) => entry.handle);
  }

  subscribe(listener: (event: ClusterEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  subscribeStates(listener: ClusterStateListener): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  state(name: string): ClusterStatus | undefined {
    const entry = this.active.get(name);
    if (entry !== undefined) return this.statusOf(entry);
    return this.refused.find((status) => status.name === name);
  }

  states(): readonly ClusterStatus[] {
    return [...[...this.active.values()].map((entry) => this.statusOf(entry)), ...this.refused];
  }

  /** Replaces every registration of `group` (`config`, `secrets`) and applies the outcome. */
  replace(group: string, registrations: readonly ClusterRegistration[]): void {
    if (this.closed) return;
    this.groups.set(group, registrations);
    this.apply();
  }

  async close(): Promise<void> {
    this.closed = true;
    const dropping: Array<Promise<void>> = [];
    for (const entry of this.active.values()) {
      entry.prober.stop();
      if (entry.registration.origin !== 'local') dropping.push(dropConnection(entry.handle.kube));
    }
    this.active.clear();
    await Promise.all(dropping);
  }

  private apply(): void {
    const resolved = resolveRegistrations([...this.groups.values()].flat());
    const events: ClusterEvent[] = [];
    const dropped: Active[] = [];
    const refused: ClusterStatus[] = resolved.refused.map(({ registration, message }) =>
      this.refusedStatus(registration, message),
    );
    for (const [name, entry] of this.active) {
      const next = resolved.active.get(name);
      if (
        next !== undefined &&
        next.declaredBy === entry.registration.declaredBy &&
        sameTarget(next, entry.registration)
      )
        continue;
      this.active.delete(name);
      dropped.push(entry);
      if (next === undefined) events.push({ kind: 'removed', cluster: entry.handle });
    }
    for (const [name, registration] of resolved.active) {
      if (this.active.has(name)) continue;
      let kube: KubeConnection;
      try {
        kube = this.connect(registration);
      } catch (err) {
        // A context the kubeconfig lacks, a kubeconfig file gone: refused, never thrown out of here.
        refused.push(this.refusedStatus(registration, (err as Error).message));
        const previous = dropped.find((entry) => entry.handle.name === name);
        if (previous !== undefined) events.push({ kind: 'removed', cluster: previous.handle });
        continue;
      }
      const handle: ClusterHandle = { name, origin: registration.origin, server: serverOf(kube), kube };
      this.active.set(name, { registration, handle, prober: this.startProber(registration, handle) });
      const previous = dropped.find((entry) => entry.handle.name === name);
      events.push(
        previous !== undefined
          ? { kind: 'changed', cluster: handle, previous: previous.handle }
          : { kind: 'added', cluster: handle },
      );
    }
    const newlyRefused = refused.filter(
      (status) =>
        !this.refused.some(
          (known) => known.declaredBy === status.declaredBy && known.message === status.message,
        ),
    );
    const withdrawn = this.refused.filter(
      (status) => !refused.some((now) => now.declaredBy === status.declaredBy),
    );
    this.refused = refused;
    for (const event of events) {
      this.options.logger.info(
        { cluster: event.cluster.name, server: event.cluster.server, origin: event.cluster.origin },
        `cluster ${event.cluster.name} ${event.kind}`,
      );
      for (const listener of this.listeners) this.tell(() => listener(event));
    }
    for (const status of newlyRefused) {
      this.options.logger.warn(
        { cluster: status.name, declaredBy: status.declaredBy },
        `cluster ${status.name} (${status.declaredBy}) is Invalid: ${status.message}`,
      );
      this.announce(status, this.secretOf(status.declaredBy, resolved));
    }
    for (const status of withdrawn)
      for (const listener of this.stateListeners) this.tell(() => listener(status, true));
    // Listeners heard of the change first; the old connections close once nobody is told to use them.
    for (const entry of dropped) {
      entry.prober.stop();
      if (entry.registration.origin !== 'local') void dropConnection(entry.handle.kube);
    }
  }

  private secretOf(
    declaredBy: string,
    resolved: ReturnType<typeof resolveRegistrations>,
  ): SecretRef | undefined {
    return (
      resolved.refused.find((entry) => entry.registration.declaredBy === declaredBy)?.registration.secret ??
      [...this.groups.values()].flat().find((registration) => registration.declaredBy === declaredBy)?.secret
    );
  }

  private connect(registration: ClusterRegistration): KubeConnection {
    const target = registration.target;
    if (target?.kind === 'spec') return connectionFromSpec(target.spec, this.options.rateLimit);
    if (target?.kind === 'context')
      return connectionFromContext(target, this.options.kubeconfig, this.options.rateLimit);
    throw new Error(`${registration.declaredBy}: nothing to connect to`);
  }

  private refusedStatus(registration: ClusterRegistration, message: string): ClusterStatus {
    const previous = this.refused.find(
      (status) => status.declaredBy === registration.declaredBy && status.message === message,
    );
    const server = registration.target?.kind === 'spec' ? registration.target.spec.server : '';
    return {
      name: registration.name,
      phase: 'Invalid',
      message,
      since: previous?.since ?? this.options.clock.now().toISOString(),
      origin: registration.origin,
      declaredBy: registration.declaredBy,
      server,
    };
  }

  private statusOf(entry: Active): ClusterStatus {
    const state: ClusterState = entry.prober.state ?? {
      name: entry.handle.name,
      phase: 'Unreachable',
      message: 'not probed yet',
      since: this.options.clock.now().toISOString(),
    };
    return {
      ...state,
      origin: entry.registration.origin,
      declaredBy: entry.registration.declaredBy,
      server: entry.handle.server,
    };
  }

  private announce(status: ClusterStatus, secret: SecretRef | undefined): void {
    for (const listener of this.stateListeners) this.tell(() => listener(status, false));
    if (secret !== undefined) this.tell(() => this.options.onSecretProblem?.(secret, status));
  }

  private tell(call: () => void): void {
    try {
      call();
    } catch (err) {
      this.options.logger.error({ err }, 'a cluster listener failed');
    }
  }

  private startProber(registration: ClusterRegistration, handle: ClusterHandle): Prober {
    const cancelled = { value: false };
    const prober: Prober = {
      state: undefined,
      stop: () => {
        cancelled.value = true;
      },
    };
    const random = this.options.random ?? Math.random;
    let failures = 0;
    const loop = async (): Promise<void> => {
      while (!cancelled.value && !this.closed) {
        let outcome: ProbeOutcome;
        try {
          await withTimeout(this.probe(handle.kube), this.options.probeTimeoutMs ?? PROBE_TIMEOUT_MS);
          outcome = { kind: 'ok' };
        } catch (err) {
          outcome = classifyProbeError(err);
        }
        if (cancelled.value || this.closed) return;
        failures = outcome.kind === 'ok' ? 0 : failures + 1;
        const previous = prober.state;
        const next = nextClusterState(handle.name, previous, outcome, this.options.clock.now());
        prober.state = next;
        if (previous?.phase !== next.phase || previous.message !== next.message) {
          const status = {
            ...next,
            origin: registration.origin,
            declaredBy: registration.declaredBy,
            server: handle.server,
          };
          const level = next.phase === 'Ready' ? 'info' : 'warn';
          if (previous?.phase !== next.phase)
            this.options.logger[level](
              { cluster: handle.name, phase: next.phase, server: handle.server },
              `cluster ${handle.name}: ${next.phase}: ${next.message}`,
            );
          // An Event on the Secret only when the phase changes (a message that only changes is logged).
          this.announce(status, previous?.phase !== next.phase ? registration.secret : undefined);
        }
        const delay = nextProbeDelayMs(outcome, failures, this.schedule, random);
        const waiting = delay === undefined ? undefined : sleep(this.options.clock, delay);
        this.tell(() => this.options.onProbed?.(next, delay));
        if (waiting === undefined) return;
        await waiting;
      }
    };
    void loop();
    return prober;
  }
}

/**
 * A cluster's readiness for /readyz: shown as `degraded` while it is not Ready, never blocking, because
 * one cluster down must not turn away the webhooks and work of every other (the local API server keeps
 * its own blocking `kubernetes` check).
 */
export function clusterReadiness(status: ClusterStatus | undefined): ClusterReadinessReport {
  if (status === undefined) return { ok: false, blocksReadiness: false, detail: 'not registered' };
  if (status.phase === 'Ready') return { ok: true };
  return {
    ok: false,
    blocksReadiness: false,
    detail: `${status.phase} since ${status.since}: ${status.message}`,
  };
}
