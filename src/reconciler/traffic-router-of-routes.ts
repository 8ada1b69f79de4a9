// A TrafficRouter over route objects: each setWeights brings every route of the rollout to the weights.
import type { Logger } from '../log/logger.ts';
import type { RouteWriter } from './route-writer.ts';
import type {
  HeaderRouteInput,
  MirrorRouteInput,
  RouteTarget,
  TrafficRouter,
  TrafficWeightsInput,
  TrafficWeightsResult,
} from './traffic-router.ts';

/** A managed route asked of a router none of whose routes can carry it. */
export class ManagedRouteUnsupportedError extends Error {
  override readonly name = 'ManagedRouteUnsupportedError';
  readonly code = 'traffic.managed_route_unsupported';
  constructor(kind: 'header' | 'mirror', name: string, router: string) {
    super(`${kind} route "${name}": the ${router} router has no ${kind} routes`);
  }
}

/**
 * The canary weight a route is given for `canaryWeight`: 0 without a canary (everything to stable,
 * whatever weight status records), else clamped to 0..total.
 */
export function routedCanaryWeight(canaryWeight: number, hasCanary: boolean, total: number): number {
  return Math.min(Math.max(hasCanary ? canaryWeight : 0, 0), total);
}

/** Experiment destinations asked of a router none of whose providers carries them (validation refuses it first). */
export class ExperimentDestinationsUnsupportedError extends Error {
  override readonly name = 'ExperimentDestinationsUnsupportedError';
  readonly code = 'traffic.experiment_destinations_unsupported';
  constructor(services: readonly string[], router: string) {
    super(
      `experiment templates ${services.join(', ')}: the ${router} router sends no traffic to experiment templates (Istio, SMI and ALB do)`,
    );
  }
}

/** The routes of one rollout, as its providers name them. */
export interface RolloutRouteTargets {
  /** The providers set (e.g. `gatewayAPI`, `smi`): the router's type in logs. */
  providers: string[];
  targets: RouteTarget[];
  /** maxTrafficWeight. */
  total: number;
  canaryService: string;
  stableService: string;
  /** Every provider set can carry experiment destinations (src/traffic's table). */
  experimentDestinations: boolean;
}

/**
 * Writes the weights to each route in order. The first failure stops the call and is thrown (the
 * executor records it in status and the planner retries with backoff); routes already written keep
 * the new weights, which the retry finds unchanged.
 */
export class RouteTrafficRouter implements TrafficRouter {
  readonly type: string;

  constructor(
    private readonly writer: RouteWriter,
    private readonly routes: RolloutRouteTargets,
    private readonly logger: Logger,
  ) {
    this.type = routes.providers.join('+');
  }

  async setWeights(input: TrafficWeightsInput): Promise<TrafficWeightsResult> {
    const { total } = this.routes;
    // The input's Services when it names them (ping-pong roles of this pass), else the routes'.
    const canaryService = input.canaryService || this.routes.canaryService;
    const stableService = input.stableService || this.routes.stableService;
    const canary = routedCanaryWeight(input.canaryWeight, input.canaryHash !== undefined, total);
    const additional = input.additional ?? [];
    // Never half-applied: a provider without extra destinations would give their share to the stable.
    if (additional.length > 0 && !this.routes.experimentDestinations)
      throw new ExperimentDestinationsUnsupportedError(
        additional.map((destination) => destination.serviceName),
        this.type,
      );
    const changed: string[] = [];
    const weights = {
      canary,
      total,
      canaryService,
      stableService,
      stableHash: input.stableHash,
      canaryHash: input.canaryHash,
      ...(additional.length > 0 && { additional }),
    };
    for (const named of this.routes.targets) {
      const target = await this.writer.resolve(named);
      const result = await this.writer.write(target, weights);
      if (result === 'unchanged') continue;
      const route = `${target.resource.kind} ${target.namespace}/${target.name}`;
      // A removal follows Rollgate's own weight 0 (Ambassador's canary Mapping): cleanup, not drift.
      if (result === 'deleted') {
        this.logger.info({ route }, 'route object removed at weight 0');
        continue;
      }
      changed.push(route);
      this.logger.info({ route, canaryWeight: canary, result }, 'route weights written');
    }
    return { changed };
  }

  setHeaderRoute(input: HeaderRouteInput): Promise<void> {
    return this.setManaged('header', input.name, (target) =>
      target.setHeaderRoute === undefined
        ? undefined
        : (live) => target.setHeaderRoute!(live, input, this.routes),
    );
  }

  setMirrorRoute(input: MirrorRouteInput): Promise<void> {
    return this.setManaged('mirror', input.name, (target) =>
      target.setMirrorRoute === undefined
        ? undefined
        : (live) => target.setMirrorRoute!(live, input, this.routes),
    );
  }

  /** Writes the managed route to every route object that can carry it (at least one must). */
  private async setManaged(
    kind: 'header' | 'mirror',
    name: string,
    changeOf: (
      target: RouteTarget,
    ) => ((live: Record<string, unknown> | undefined) => Record<string, unknown> | Error) | undefined,
  ): Promise<void> {
    const changes = this.routes.targets.flatMap((target) => {
      const change = changeOf(target);
      return change === undefined ? [] : [{ target, change }];
    });
    if (changes.length === 0) throw new ManagedRouteUnsupportedError(kind, name, this.type);
    for (const { target, change } of changes) {
      const result = await this.writer.apply(target, change);
      if (result !== 'unchanged')
        this.logger.info(
          { route: `${target.resource.kind} ${target.namespace}/${target.name}`, [kind]: name, result },
          `${kind} route written`,
        );
    }
  }
}

/** A rollout whose routing cannot be followed: every call fails with the reason (recorded in status). */
export class RefusingTrafficRouter implements TrafficRouter {
  readonly type = 'invalid';
  constructor(private readonly reason: Error) {}
  setWeights(): Promise<void> {
    return Promise.reject(this.reason);
  }
  setHeaderRoute(): Promise<void> {
    return Promise.reject(this.reason);
  }
  setMirrorRoute(): Promise<void> {
    return Promise.reject(this.reason);
  }
}
