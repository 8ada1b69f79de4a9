// The fleet controller (imperative shell): read a Fleet and its Rollouts everywhere, plan, write status, obey.
import type { Redis } from 'ioredis';
import type { Clock } from '../clock/clock.ts';
import type { ClusterSet } from '../clusters/cluster-set.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import { isNotFound, kubeCall, KubeApiError } from '../kube/errors.ts';
import type { Logger } from '../log/logger.ts';
import { ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from '../manifest/api-version.ts';
import { FLEET_KIND, FLEET_PLURAL } from '../manifest/fleet.ts';
import { FleetQueue } from '../queue/fleet-queue.ts';
import { HeldSources } from '../queue/held-sources.ts';
import type { FleetPayload } from '../queue/job-payloads.ts';
import type { JobOutcome } from '../queue/job-outcome.ts';
import { PollQueue } from '../queue/poll-queue.ts';
import { startWorker, type RunningWorker } from '../queue/start-worker.ts';
import type { FleetAction } from './fleet-action.ts';
import { fleetReadOf, listFleets, type FleetRead } from './fleet-reads.ts';
import { observeCluster, type RolloutApi } from './observe-fleet.ts';
import { planFleet, type FleetPlan } from './plan-fleet.ts';

export interface FleetControllerOptions {
  clusters: ClusterSet;
  /** The control namespace (`kubernetes.stateNamespace`): the only one whose Fleets are walked (docs/fleets.md). */
  namespace: string;
  redis: Redis;
  prefix?: string;
  clock: Clock;
  logger: Logger;
  /** Default rollgate.dev/v1alpha1 rollouts. */
  rolloutApi?: RolloutApi;
  /** How often every Fleet is listed and enqueued (default 10 s): how a new Fleet is found. */
  resyncMs?: number;
  /** Told of each stop (the notification trigger `on-fleet-stopped`); an Event and a log line always say it. */
  onStopped?: (
    fleet: { namespace: string; name: string },
    stop: Extract<FleetAction, { kind: 'notify' }>,
  ) => Promise<void>;
}

export interface RunningFleetController {
  queue: FleetQueue;
  worker: RunningWorker;
  /** One pass over a Fleet, as a job runs it (tests). */
  pass(fleet: { namespace: string; name: string }): Promise<JobOutcome>;
  stop(options?: { force?: boolean }): Promise<void>;
}

const STATUS_WRITE_ATTEMPTS = 5;
const DEFAULT_ROLLOUT_API: RolloutApi = {
  group: ROLLGATE_API_GROUP,
  version: 'v1alpha1',
  plural: 'rollouts',
};

/**
 * Starts the fleet worker (one job per Fleet, deduplicated like reconcile jobs) and a relist of the
 * local cluster's Fleets every `resyncMs`. A pass reads the Fleet and its Rollout in every registered
 * cluster, runs the planner, writes the status (re-read and re-planned on a conflict), then carries out
 * the actions: the status first, so the holds the sync reads already release a wave when its sources
 * are woken.
 */
export function startFleetController(options: FleetControllerOptions): RunningFleetController {
  const { clusters, redis, clock } = options;
  const logger = options.logger.child({ component: 'fleet' });
  const api = options.rolloutApi ?? DEFAULT_ROLLOUT_API;
  const local = clusters.local().kube.clients;
  const queue = new FleetQueue({ connection: redis, ...(options.prefix ? { prefix: options.prefix } : {}) });
  const polls = new PollQueue({ connection: redis, ...(options.prefix ? { prefix: options.prefix } : {}) });
  const heldSources = new HeldSources(redis, options.prefix);
  const events = new EventRecorder(local.core, clock, logger);

  const read = async (namespace: string, name: string): Promise<FleetRead | undefined> => {
    try {
      return fleetReadOf(
        await kubeCall({ verb: 'get', kind: FLEET_KIND, namespace, name }, () =>
          local.custom.getNamespacedCustomObject({
            group: ROLLGATE_API_GROUP,
            version: 'v1alpha1',
            namespace,
            plural: FLEET_PLURAL,
            name,
          }),
        ),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  const writeStatus = async (fleet: FleetRead, plan: FleetPlan): Promise<void> => {
    await kubeCall(
      {
        verb: 'update',
        kind: FLEET_KIND,
        namespace: fleet.namespace,
        name: fleet.name,
        subresource: 'status',
      },
      () =>
        local.custom.replaceNamespacedCustomObjectStatus({
          group: ROLLGATE_API_GROUP,
          version: 'v1alpha1',
          namespace: fleet.namespace,
          plural: FLEET_PLURAL,
          name: fleet.name,
          body: {
            apiVersion: ROLLGATE_API_VERSION,
            kind: FLEET_KIND,
            metadata: {
              name: fleet.name,
              namespace: fleet.namespace,
              resourceVersion: fleet.resourceVersion,
            },
            spec: fleet.spec,
            status: plan.status,
          },
        }),
    );
  };

  const carryOut = async (fleet: FleetRead, action: FleetAction): Promise<void> => {
    const subject = {
      apiVersion: ROLLGATE_API_VERSION,
      kind: FLEET_KIND,
      namespace: fleet.namespace,
      name: fleet.name,
    };
    const key = `${fleet.namespace}/${fleet.name}`;
    switch (action.kind) {
      case 'emitEvent':
        await events.record(subject, { type: action.type, reason: action.reason, message: action.message });
        return;
      case 'notify':
        logger.warn(
          { fleet: key, cluster: action.cluster, revision: action.revision, step: action.step },
          `fleet stopped: ${action.reason}`,
        );
        await options.onStopped?.({ namespace: fleet.namespace, name: fleet.name }, action);
        return;
      case 'releaseWave':
        for (const cluster of action.clusters)
          for (const source of await heldSources.take(key, cluster)) {
            // An on-demand poll: the source finds no new commit and looks at its held Rollouts again.
            await polls.enqueuePoll(source, 'webhook');
            logger.info({ fleet: key, wave: action.name, cluster, source }, 'wave opened: source woken');
          }
        return;
    }
  };

  const pass = async ({ namespace, name }: { namespace: string; name: string }): Promise<JobOutcome> => {
    for (let attempt = 1; ; attempt++) {
      const fleet = await read(namespace, name);
      if (fleet === undefined) return { kind: 'done' };
      const handles = clusters.current();
      const observed = await Promise.all(handles.map((cluster) => observeCluster(cluster, fleet.spec, api)));
      const plan = planFleet({
        fleet: {
          name: fleet.name,
          namespace: fleet.namespace,
          ...(fleet.generation !== undefined ? { generation: fleet.generation } : {}),
          annotations: fleet.annotations,
          spec: fleet.spec,
          ...(fleet.status !== undefined ? { status: fleet.status } : {}),
        },
        registered: handles.map((cluster) => cluster.name),
        observed,
        now: clock.now(),
      });
      try {
        if (JSON.stringify(plan.status) !== JSON.stringify(fleet.status)) await writeStatus(fleet, plan);
      } catch (err) {
        // The Fleet moved since it was read: read, plan and write again (never the stale write).
        if (err instanceof KubeApiError && err.code === 'kube.conflict' && attempt < STATUS_WRITE_ATTEMPTS)
          continue;
        throw err;
      }
      for (const action of plan.actions) await carryOut(fleet, action);
      return { kind: 'requeue', afterMs: plan.requeueAfterMs, reason: `fleet ${plan.status.phase}` };
    }
  };

  const worker = startWorker('fleet', (payload: FleetPayload) => pass(payload), {
    connection: redis,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    logger,
  });

  let stopped = false;
  const relist = async (): Promise<void> => {
    try {
      for (const fleet of await listFleets(local, options.namespace))
        await queue.enqueue({ namespace: fleet.namespace, name: fleet.name });
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'could not list Fleets; trying again at the next resync');
    }
  };
  const resync = setInterval(() => {
    if (!stopped) void relist();
  }, options.resyncMs ?? 10_000);
  void relist();

  return {
    queue,
    worker,
    pass,
    async stop(stopOptions) {
      stopped = true;
      clearInterval(resync);
      await worker.stop(stopOptions);
      await Promise.all([queue.close(), polls.close()]);
    },
  };
}
