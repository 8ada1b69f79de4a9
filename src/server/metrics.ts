// Rollgate's Prometheus metrics: typed handles other modules record into, on a registry of our own.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { JobFinishedEvent } from '../queue/start-worker.ts';
import type { QueueDepth } from '../queue/queue-depths.ts';
import type { KubeRequestObservation } from '../kube/kube-request.ts';
import { BoundedCounter, LabelBounds } from './metric-label-bounds.ts';
import {
  ROLLOUT_GAUGES,
  ROLLOUT_GAUGE_LABELS,
  rolloutGaugeSamples,
  type GaugeSample,
  type InformedObject,
  type RolloutGaugeName,
} from './rollout-metrics.ts';

/** Reads queue depths when Prometheus scrapes (set by the process that owns the queues). */
export type QueueDepthSource = () => Promise<QueueDepth[]>;

/** The Rollouts and AnalysisRuns the process's informers hold, per cluster, read when Prometheus scrapes. */
export type RolloutSource = () => ReadonlyArray<{
  cluster: string;
  rollouts: readonly InformedObject[];
  runs: readonly InformedObject[];
}>;

/** Every metric Rollgate exports; docs/metrics.md documents each name and label. */
export interface RollgateMetrics {
  readonly registry: Registry;
  /** Polls of a source by result: `unchanged` (ref check only), `changed`, `error`. */
  readonly pollsTotal: Counter<'source' | 'result'>;
  /** Duration of a Git fetch of a source, in seconds. */
  readonly gitFetchDurationSeconds: Histogram<'source'>;
  /** Objects changed between two synced commits of a source (added + changed + removed). */
  readonly diffObjects: Histogram<'source'>;
  /** Apps a sync compared, by result: `rendered` (kustomize ran), `cache-hit`, `unchanged` (inputs equal, not rendered). */
  readonly rendersTotal: Counter<'source' | 'result'>;
  /** Jobs per queue and state, read from Redis at scrape time. */
  readonly queueJobs: Gauge<'queue' | 'state'>;
  /** Jobs finished per queue and outcome (`done`, `requeue`, `stalled`, `error`, `invalid`). */
  readonly jobsTotal: Counter<'queue' | 'outcome'>;
  /** Duration of one job run, per queue and outcome, in seconds. */
  readonly jobDurationSeconds: Histogram<'queue' | 'outcome'>;
  /** Duration of one reconcile job of a rollout (its passes together), in seconds, by result. */
  readonly reconcileDurationSeconds: Histogram<'result'>;
  /** Read-plan-act passes of reconcile jobs, by the job's result. */
  readonly reconcilePassesTotal: Counter<'result'>;
  /** Reconcile jobs that stopped for a human to act (`reason`: `stalled`); retried errors are in jobsTotal. */
  readonly reconcileErrorsTotal: Counter<'reason'>;
  /** Writes answered 409 (or 404) and re-planned, by the kind of object reconciled (`Rollout`). */
  readonly conflictsRetriedTotal: Counter<'kind'>;
  /** Webhook deliveries by provider and outcome. */
  readonly webhookDeliveriesTotal: Counter<'provider' | 'outcome'>;
  /** Promotion pull requests by promotion and what happened: `opened`, `merged`, `closed`. */
  readonly promotionPullRequestsTotal: Counter<'promotion' | 'event'>;
  /** Forge API calls of a promotion that failed after their retries, by promotion and error code. */
  readonly forgeErrorsTotal: Counter<'promotion' | 'code'>;
  /**
   * Notification sends by trigger, service and result: `sent`, `skipped` (the template has nothing for the
   * service), `retried` (a transient failure, tried again), `failed` (given up, or refused by the service),
   * `invalid` (the ConfigMap or a subscription cannot be used; the service label is then the key's).
   */
  readonly notificationsTotal: Counter<'trigger' | 'service' | 'result'>;
  /** 1 while a dependency answers, 0 while it fails: `kubernetes`, `redis`, or `git` with its `source`. */
  readonly dependencyUp: Gauge<'dependency' | 'source'>;
  /** 1 once the process has finished starting (CRDs checked, workers and queues up), else 0. */
  readonly started: Gauge;
  /** Syncs of a source by result: `synced`, `failed` (synced with problems), `up-to-date`, `older`, `halted`. */
  readonly syncsTotal: Counter<'source' | 'result'>;
  /** API requests of the typed clients by verb, resource and status code (`error`: no answer). */
  readonly kubeRequestsTotal: Counter<'verb' | 'resource' | 'code' | 'cluster'>;
  /** Duration of one API request by verb, resource and cluster, in seconds. */
  readonly kubeRequestDurationSeconds: Histogram<'verb' | 'resource' | 'cluster'>;
  /** Sets (or clears) where queue depths come from. */
  setQueueDepthSource(source: QueueDepthSource | undefined): void;
  /** Sets (or clears) where the per-rollout gauges (Argo's `rollout_info`, …) come from. */
  setRolloutSource(source: RolloutSource | undefined): void;
  /** Records one API request to `cluster`'s API server (pass to observeKubeRequests). */
  observeKubeRequest(observation: KubeRequestObservation, cluster: string): void;
  /** Records a finished job (pass as startWorker's onJobFinished). */
  observeJobFinished(event: JobFinishedEvent): void;
}

/** The results a notification send is counted under (docs/metrics.md). */
const NOTIFICATION_RESULTS = ['sent', 'skipped', 'retried', 'failed', 'invalid'] as const;
/** Series of rollgate_notifications_total before new trigger and service names are counted as `other`. */
export const MAX_NOTIFICATION_SERIES = 200;
/**
 * Series of the API client metrics before a new resource is counted as `other`: a source may apply any
 * kind Git names, and each is a resource label (Rollgate's own kinds and the built-ins are far fewer).
 */
export const MAX_KUBE_REQUEST_SERIES = 400;
/** The per-rollout gauges are computed once per scrape, not once per gauge. */
const ROLLOUT_SAMPLES_REUSE_MS = 1_000;

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Creates a fresh set of metrics on a new registry (never prom-client's global one), with the
 * process metrics (`process_*`, `nodejs_*`) when `processMetrics` is true.
 */
export function createRollgateMetrics(options: { processMetrics?: boolean } = {}): RollgateMetrics {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  let depthSource: QueueDepthSource | undefined;
  let rolloutSource: RolloutSource | undefined;
  let rolloutSamples: { at: number; byName: Map<RolloutGaugeName, GaugeSample[]> } | undefined;
  const samplesOf = (name: RolloutGaugeName): GaugeSample[] => {
    if (rolloutSource === undefined) return [];
    const now = Date.now();
    if (rolloutSamples === undefined || now - rolloutSamples.at > ROLLOUT_SAMPLES_REUSE_MS) {
      const byName = new Map<RolloutGaugeName, GaugeSample[]>();
      for (const { cluster, rollouts, runs } of rolloutSource())
        for (const sample of rolloutGaugeSamples(rollouts, runs, cluster)) {
          let list = byName.get(sample.name);
          if (list === undefined) byName.set(sample.name, (list = []));
          list.push(sample);
        }
      rolloutSamples = { at: now, byName };
    }
    return rolloutSamples.byName.get(name) ?? [];
  };
  // Argo Rollouts' names, unprefixed, so its users' dashboards and alerts read Rollgate's rollouts as they are.
  for (const [name, help] of Object.entries(ROLLOUT_GAUGES) as Array<[RolloutGaugeName, string]>)
    new Gauge({
      name,
      help,
      labelNames: ROLLOUT_GAUGE_LABELS[name],
      registers: [registry],
      collect() {
        this.reset();
        for (const sample of samplesOf(name)) this.set(sample.labels, sample.value);
      },
    });

  const kubeRequestBounds = new LabelBounds<'verb' | 'resource' | 'code' | 'cluster'>({
    capped: ['resource'],
    maxSeries: MAX_KUBE_REQUEST_SERIES,
  });
  const kubeRequestsTotal = new Counter({
    name: 'rollgate_kube_requests_total',
    help: 'Kubernetes API requests, by verb, resource, status code (error: no answer) and cluster.',
    labelNames: ['verb', 'resource', 'code', 'cluster'] as const,
    registers: [registry],
  });
  const kubeRequestDurationSeconds = new Histogram({
    name: 'rollgate_kube_request_duration_seconds',
    help: 'Duration of one Kubernetes API request, by verb, resource and cluster.',
    labelNames: ['verb', 'resource', 'cluster'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });

  const queueJobs = new Gauge({
    name: 'rollgate_queue_jobs',
    help: 'Jobs in each queue by state (and a reconcile queue by its driven group), read from Redis when scraped.',
    labelNames: ['queue', 'state', 'group'] as const,
    registers: [registry],
    async collect() {
      if (depthSource === undefined) return;
      const depths = await depthSource();
      this.reset();
      // Several clusters' reconcile queues report under one (queue, state, group): their jobs add up.
      for (const d of depths)
        this.inc(
          { queue: d.queue, state: d.state, ...(d.group !== undefined && { group: d.group }) },
          d.count,
        );
    },
  });

  const jobsTotal = new Counter({
    name: 'rollgate_jobs_total',
    help: 'Jobs finished, by queue and outcome.',
    labelNames: ['queue', 'outcome'] as const,
    registers: [registry],
  });
  const jobDurationSeconds = new Histogram({
    name: 'rollgate_job_duration_seconds',
    help: 'Duration of one job run, by queue and outcome.',
    labelNames: ['queue', 'outcome'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });

  return {
    registry,
    pollsTotal: new Counter({
      name: 'rollgate_polls_total',
      help: 'Polls of a source, by result (unchanged, changed, error).',
      labelNames: ['source', 'result'] as const,
      registers: [registry],
    }),
    gitFetchDurationSeconds: new Histogram({
      name: 'rollgate_git_fetch_duration_seconds',
      help: 'Duration of a Git fetch of a source.',
      labelNames: ['source'] as const,
      buckets: SECONDS_BUCKETS,
      registers: [registry],
    }),
    diffObjects: new Histogram({
      name: 'rollgate_diff_objects',
      help: 'Objects added, changed or removed between two synced commits of a source.',
      labelNames: ['source'] as const,
      buckets: [0, 1, 2, 5, 10, 25, 50, 100, 250, 1000, 5000],
      registers: [registry],
    }),
    rendersTotal: new Counter({
      name: 'rollgate_renders_total',
      help: 'Apps (kustomizations) a sync compared, by result: rendered, cache-hit, unchanged.',
      labelNames: ['source', 'result'] as const,
      registers: [registry],
    }),
    queueJobs,
    jobsTotal,
    jobDurationSeconds,
    reconcileDurationSeconds: new Histogram({
      name: 'rollgate_reconcile_duration_seconds',
      help: 'Duration of one reconcile job of a rollout (its passes together), by result.',
      labelNames: ['result'] as const,
      buckets: SECONDS_BUCKETS,
      registers: [registry],
    }),
    reconcileErrorsTotal: new Counter({
      name: 'rollgate_reconcile_errors_total',
      help: 'Reconcile jobs that stopped for a human to act, by reason.',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    // Jobs tell how often a rollout is looked at; passes, how much each look costs (each is a read, a plan
    // and the plan's writes): passes per job is what a change to the job's loop moves.
    reconcilePassesTotal: new Counter({
      name: 'rollgate_reconcile_passes_total',
      help: 'Read-plan-act passes of reconcile jobs, by the job result.',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    conflictsRetriedTotal: new Counter({
      name: 'rollgate_conflicts_retried_total',
      help: 'Writes answered 409 Conflict (or 404) that were re-read and re-planned, by kind of object reconciled.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    webhookDeliveriesTotal: new Counter({
      name: 'rollgate_webhook_deliveries_total',
      help: 'Webhook deliveries, by provider and outcome.',
      labelNames: ['provider', 'outcome'] as const,
      registers: [registry],
    }),
    promotionPullRequestsTotal: new Counter({
      name: 'rollgate_promotion_pull_requests_total',
      help: 'Promotion pull requests opened, merged and closed, by promotion.',
      labelNames: ['promotion', 'event'] as const,
      registers: [registry],
    }),
    forgeErrorsTotal: new Counter({
      name: 'rollgate_forge_errors_total',
      help: 'Forge API calls of a promotion that failed after their retries, by promotion and error code.',
      labelNames: ['promotion', 'code'] as const,
      registers: [registry],
    }),
    // Trigger and service names come from subscription annotations any user who may annotate a Rollout
    // writes (and, for `invalid`, the annotation's key): bounded, or each new name is a series for good.
    notificationsTotal: new BoundedCounter(
      {
        name: 'rollgate_notifications_total',
        help: 'Notification sends, by trigger, service and result (sent, skipped, retried, failed, invalid).',
        labelNames: ['trigger', 'service', 'result'] as const,
        registers: [registry],
      },
      {
        fixed: { result: NOTIFICATION_RESULTS },
        names: ['trigger', 'service'],
        maxSeries: MAX_NOTIFICATION_SERIES,
      },
    ),
    dependencyUp: new Gauge({
      name: 'rollgate_dependency_up',
      help: 'Whether a dependency answered its last check (1) or failed it (0): kubernetes, redis, git (by source).',
      labelNames: ['dependency', 'source'] as const,
      registers: [registry],
    }),
    started: new Gauge({
      name: 'rollgate_started',
      help: 'Whether the process has finished starting (1) or is still retrying its start (0).',
      registers: [registry],
    }),
    syncsTotal: new Counter({
      name: 'rollgate_syncs_total',
      help: 'Syncs of a source, by result (synced, failed, up-to-date, older, halted).',
      labelNames: ['source', 'result'] as const,
      registers: [registry],
    }),
    kubeRequestsTotal,
    kubeRequestDurationSeconds,
    setQueueDepthSource(source) {
      depthSource = source;
    },
    setRolloutSource(source) {
      rolloutSource = source;
      rolloutSamples = undefined;
    },
    observeKubeRequest(observation, cluster) {
      const { verb, resource, code } = kubeRequestBounds.apply({
        verb: observation.verb,
        resource: observation.resource,
        code: observation.code,
        cluster,
      });
      kubeRequestsTotal.inc({ verb, resource, code, cluster });
      kubeRequestDurationSeconds.observe({ verb, resource, cluster }, observation.seconds);
    },
    observeJobFinished(event) {
      jobsTotal.inc({ queue: event.queue, outcome: event.outcome });
      jobDurationSeconds.observe({ queue: event.queue, outcome: event.outcome }, event.durationMs / 1_000);
    },
  };
}

/** The process-wide metrics other modules import and record into. */
export const metrics: RollgateMetrics = createRollgateMetrics();
