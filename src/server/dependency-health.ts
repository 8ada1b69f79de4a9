// What a process knows of its dependencies right now (up, or down since when and why), for /readyz and
// the rollgate_dependency_up gauge, and the rule that turns it into readiness.
import type { RollgateMetrics } from './metrics.ts';

/**
 * A dependency: the (local) API server, Redis, one Git source (by its configured name), or the API server
 * of one remote cluster (by its registered name).
 */
export type Dependency =
  | { kind: 'kubernetes' }
  | { kind: 'redis' }
  | { kind: 'git'; source: string }
  | { kind: 'cluster'; cluster: string };

/** The last thing a dependency's checks or its users saw. */
export interface DependencyState {
  up: boolean;
  /** Epoch ms of the last change between up and down. */
  since: number;
  /** The last failure, while down. */
  error?: string;
}

/** What one readiness check reports (see http-server's ReadinessCheck). */
export interface ReadinessReport {
  ok: boolean;
  detail?: string;
  /** A failing check that does not block readiness is shown as `degraded`, for information. */
  blocksReadiness?: boolean;
}

const keyOf = (d: Dependency): string =>
  d.kind === 'git' ? `git/${d.source}` : d.kind === 'cluster' ? `cluster/${d.cluster}` : d.kind;

/** The gauge's `source` label: the Git source's or the cluster's name, empty for the others. */
const nameOf = (d: Dependency): string =>
  d.kind === 'git' ? d.source : d.kind === 'cluster' ? d.cluster : '';

/** Records up/down per dependency, keeping when it last changed; each record sets the gauge. */
export class DependencyHealth {
  private readonly states = new Map<string, DependencyState>();

  constructor(
    private readonly metrics: Pick<RollgateMetrics, 'dependencyUp'>,
    private readonly now: () => number,
  ) {}

  up(dependency: Dependency): void {
    this.record(dependency, true, undefined);
  }

  down(dependency: Dependency, error: string): void {
    this.record(dependency, false, error);
  }

  /** A Git source that went away (its GitSource deleted): no state and no gauge series left for it. */
  forget(dependency: Dependency): void {
    this.states.delete(keyOf(dependency));
    this.metrics.dependencyUp.remove({ dependency: dependency.kind, source: nameOf(dependency) });
  }

  state(dependency: Dependency): DependencyState | undefined {
    return this.states.get(keyOf(dependency));
  }

  /** Every Git source with a state, by name. */
  gitSources(): Array<{ source: string; state: DependencyState }> {
    return [...this.states.entries()]
      .filter(([key]) => key.startsWith('git/'))
      .map(([key, state]) => ({ source: key.slice('git/'.length), state }));
  }

  private record(dependency: Dependency, up: boolean, error: string | undefined): void {
    const key = keyOf(dependency);
    const previous = this.states.get(key);
    const since = previous && previous.up === up ? previous.since : this.now();
    this.states.set(key, { up, since, ...(error !== undefined ? { error } : {}) });
    this.metrics.dependencyUp.set({ dependency: dependency.kind, source: nameOf(dependency) }, up ? 1 : 0);
  }
}

/**
 * The readiness rule for the API server: a process whose API server fails is still ready for
 * `graceMs`, because webhooks only need Redis (they are queued and run when the API answers again) and
 * every replica shares the same API server, so turning them all unready would only refuse webhooks.
 * Failing for longer than that (an expired token, a broken network path, a wrong kubeconfig) makes it
 * unready, so the failure shows in `kubectl get pods` and stops a Deployment rollout of a broken config.
 */
export function kubernetesReadiness(
  state: DependencyState | undefined,
  now: number,
  graceMs: number,
): ReadinessReport {
  if (state === undefined || state.up) return { ok: true };
  const failingMs = Math.max(0, now - state.since);
  const failingFor = `${Math.round(failingMs / 1000)} s`;
  const blocks = failingMs >= graceMs;
  return {
    ok: false,
    blocksReadiness: blocks,
    detail: `${state.error ?? 'unreachable'} (failing for ${failingFor}; ${
      blocks ? 'longer than' : 'not ready after'
    } ${Math.round(graceMs / 1000)} s)`,
  };
}

/** A Git source's state, for information only: a failing remote never makes the process unready. */
export function gitSourceReadiness(state: DependencyState): ReadinessReport {
  return state.up ? { ok: true } : { ok: false, blocksReadiness: false, detail: state.error ?? 'failing' };
}

/**
 * A cluster's state, for information only: a remote cluster that is down stops its own sources and
 * rollouts, never the process (the local cluster's failure is judged by {@link kubernetesReadiness}).
 */
export function clusterReadiness(state: DependencyState | undefined): ReadinessReport {
  return state === undefined || state.up
    ? { ok: true }
    : { ok: false, blocksReadiness: false, detail: state.error ?? 'unreachable' };
}
