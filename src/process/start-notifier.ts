// The notification side of a process: turns a pass's transition into notify jobs, and runs them (plan, render, send).
import { isNotFound, kubeCall } from '../kube/errors.ts';
import { NotificationConfigReader } from '../kube/notification-config-reader.ts';
import type { RolloutTransition } from '../reconciler/reconcile-rollout.ts';
import {
  detectTransitions,
  type BuiltinTrigger,
  type ScaledReplicaSet,
} from '../notify/detect-transitions.ts';
import { NotificationConfigError } from '../notify/notification-config-error.ts';
import { NotificationDeliveryError } from '../notify/notification-delivery-error.ts';
import type { ServiceConfig } from '../notify/service-options.ts';
import { DEFAULT_LOCAL_CLUSTER, eventKey, planDeliveries, type Delivery } from '../notify/plan-deliveries.ts';
import {
  fleetStoppedKey,
  fleetTemplateData,
  type FleetStopped,
  type FleetTemplateData,
} from '../notify/fleet-stopped.ts';
import type { ClusterSet } from '../clusters/cluster-set.ts';
import type { KubeClients } from '../kube/client.ts';
import type { SourceTemplateData } from '../notify/source-template-data.ts';
import { fetchHttpCall, type HttpCall } from '../notify/services/notification-sender.ts';
import type { MailCall } from '../notify/services/mail-call.ts';
import { DEFAULT_SERVICE_CALLS } from '../notify/services/service-calls.ts';
import { sendNotification } from '../notify/services/senders.ts';
import { hasSubscriptions, subscribeEntriesOf } from '../notify/subscriptions.ts';
import { ROLLGATE_API_GROUP } from '../manifest/api-version.ts';
import { ATTEMPTS_BY_QUEUE } from '../queue/job-defaults.ts';
import type { NotifyPayload } from '../queue/job-payloads.ts';
import type { JobOutcome } from '../queue/job-outcome.ts';
import { NotifyQueue } from '../queue/notify-queue.ts';
import { startWorker, type RunningWorker } from '../queue/start-worker.ts';
import { metrics as defaultMetrics, type RollgateMetrics } from '../server/metrics.ts';
import { drivenApiOfVersion } from '../manifest/driven-api.ts';
import { GIT_SOURCE_PLURAL } from '../manifest/git-source.ts';
import type { RolloutStatus } from '../manifest/rollout.ts';

import type { Runtime } from './runtime.ts';

/** A Rollout as read (plain JSON): what templates see as `.rollout`. */
type RolloutObject = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; uid?: string; annotations?: Record<string, string> };
};

export interface RunningNotifier {
  queue: NotifyQueue;
  worker: RunningWorker;
  /**
   * For the reconciler: detects the pass's triggers and enqueues them. Never throws, never waits.
   * `cluster`: the cluster the Rollout is in (absent: the local one); templates read it as `.cluster`.
   */
  onTransition(transition: RolloutTransition, cluster?: string): void;
  /**
   * For the fleet controller: a Fleet stopped (a canary aborted in one of its clusters). Sends trigger
   * `on-fleet-stopped` to the Fleet's subscriptions (its subscribe annotations), once per stop. Never
   * throws, never waits.
   */
  onFleetStopped(stopped: FleetStopped): void;
  /** For the promoter: a promotion pull request was opened or merged for this Rollout. */
  onPromotion(
    trigger: Extract<BuiltinTrigger, 'on-promotion-pr-opened' | 'on-promotion-merged'>,
    rollout: RolloutObject,
    promotion: { name: string; pullRequest: { number: number; url?: string } },
  ): void;
  /** Enqueues still being written (tests wait for them). */
  settled(): Promise<void>;
  stop(options?: { force?: boolean }): Promise<void>;
}

export interface NotifierOptions {
  metrics?: RollgateMetrics;
  /**
   * The clusters whose Rollouts it notifies about: a job names its Rollout's cluster, and who is
   * subscribed is read from that cluster (default: the local cluster only).
   */
  clusters?: ClusterSet;
  /** How services are called (default: fetch with a timeout). */
  http?: HttpCall;
  /** How the email service submits (default: SMTP with nodemailer). */
  mail?: MailCall;
  /** How long a ConfigMap read is reused (default 10 s). */
  configTtlMs?: number;
  /**
   * The subscribe entries of a source, read when its notification is planned and sent (an annotations
   * map: a GitSource object's annotations, a config source's `notifications`); undefined when the source
   * is gone. Default: the configuration's sources.
   */
  sourceSubscriptions?: (
    source: string,
  ) => Readonly<Record<string, string>> | undefined | Promise<Readonly<Record<string, string>> | undefined>;
}

/** The Rollout as templates see it: status as written by the pass, without server bookkeeping. */
function snapshot(raw: Record<string, unknown>, status: unknown): RolloutObject {
  const metadata = { ...((raw.metadata ?? {}) as Record<string, unknown>) };
  delete metadata.managedFields;
  return { ...raw, metadata, status } as RolloutObject;
}

/**
 * Starts the notify worker. Producing is fire-and-forget: `onTransition` runs the pure trigger detection
 * and starts one Redis add per fired trigger, without waiting, so a reconcile is never slowed or stopped by
 * notifications (a failed add is logged). Only Rollouts with a subscribe annotation are looked at.
 *
 * An `event` job reads the ConfigMap and Secret, plans the deliveries (subscriptions × conditions ×
 * templates) and adds one `delivery` job each; a `delivery` job sends one message. Both kinds are added
 * at most once per key (see NotifyQueue), and a delivery is marked sent in Redis right after it was, so
 * neither a second process nor a restart sends it again. A transient failure is retried with the queue's
 * capped backoff; a refused or misconfigured one is given up at once and logged with the key to fix.
 */
export function startNotifier(runtime: Runtime, options: NotifierOptions = {}): RunningNotifier {
  const { config, logger, redis } = runtime;
  const log = logger.child({ component: 'notifier' });
  const metrics = options.metrics ?? defaultMetrics;
  const http = options.http ?? fetchHttpCall;
  const calls = { mail: options.mail ?? DEFAULT_SERVICE_CALLS.mail, now: () => runtime.clock.now() };
  const queue = new NotifyQueue({ connection: redis, prefix: config.redis.prefix });
  const reader = new NotificationConfigReader(
    runtime.kube.clients,
    config.kubernetes.stateNamespace,
    runtime.clock,
    options.configTtlMs,
  );
  const pending = new Set<Promise<void>>();
  const localCluster = options.clusters?.localName ?? DEFAULT_LOCAL_CLUSTER;
  /** The clients of the cluster a job names; undefined for a cluster no longer registered. */
  const clientsOf = (cluster: string | undefined): KubeClients | undefined =>
    cluster === undefined || cluster === localCluster
      ? runtime.kube.clients
      : options.clusters?.get(cluster)?.kube.clients;
  /** What every planned event says of its cluster (`.cluster`, `.localCluster`). */
  const whereOf = (payload: { cluster?: string | undefined }) => ({
    localCluster,
    ...(payload.cluster !== undefined && { cluster: payload.cluster }),
  });

  const enqueue = (payload: NotifyPayload): void => {
    const adding = queue
      .add(payload)
      .then((result) =>
        log.debug({ key: payload.key, trigger: payload.trigger, result }, 'notification enqueued'),
      )
      .catch((err: unknown) =>
        log.warn(
          { key: payload.key, trigger: payload.trigger, err: (err as Error).message },
          'could not enqueue a notification; it is lost',
        ),
      )
      .finally(() => pending.delete(adding));
    pending.add(adding);
  };

  /** `subject`: `{rollout: namespace/name}` or `{source}`, what the notification is about. */
  const invalid = (
    trigger: string,
    error: NotificationConfigError,
    subject: { rollout: string } | { source: string },
  ): void => {
    metrics.notificationsTotal.inc({ trigger, service: error.key, result: 'invalid' });
    log.error(
      { ...subject, trigger, key: error.key, code: error.code, err: error.message },
      'notification not sent: fix the ConfigMap key or annotation',
    );
  };

  /**
   * The notification configuration, or the job's outcome when it is invalid (counted and logged by
   * `invalid`): a broken ConfigMap stalls the job until it is fixed, it never throws it away.
   */
  const configOrStall = async (
    trigger: string,
    subject: { rollout: string } | { source: string },
  ): Promise<Awaited<ReturnType<typeof reader.read>> | JobOutcome> => {
    try {
      return await reader.read();
    } catch (err) {
      if (!(err instanceof NotificationConfigError)) throw err;
      invalid(trigger, err, subject);
      return { kind: 'stalled', reason: err.message };
    }
  };

  /**
   * The template data of a notify job with who is subscribed taken from the cluster: the Rollout the job
   * names, read now, must be the one it describes (same uid), and its subscribe annotations, not the
   * job's, say which services and recipients get it. Undefined when it is gone or is another object.
   * (The rest of the job's Rollout is its state at the transition, which templates are meant to show.)
   */
  const withLiveSubscriptions = async (
    payload: Extract<NotifyPayload, { kind: 'event' | 'delivery' }>,
  ): Promise<Record<string, unknown> | undefined> => {
    const { namespace, name } = payload;
    // Read in the group the transition's Rollout lives in (its apiVersion): rollgate.dev or argoproj.io.
    const api = drivenApiOfVersion(
      typeof payload.rollout.apiVersion === 'string' ? payload.rollout.apiVersion : undefined,
    );
    // Read in the Rollout's own cluster: a cluster since removed has no Rollout to notify about.
    const clients = clientsOf(payload.cluster);
    if (clients === undefined) return undefined;
    let live: RolloutObject;
    try {
      live = (await kubeCall({ verb: 'get', kind: 'Rollout', namespace, name }, () =>
        clients.custom.getNamespacedCustomObject({
          group: api.group,
          version: api.version,
          namespace,
          plural: api.plurals.rollouts,
          name,
        }),
      )) as RolloutObject;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const described = (payload.rollout.metadata ?? {}) as { uid?: unknown };
    if (live.metadata?.uid === undefined || described.uid !== live.metadata.uid) return undefined;
    return {
      ...payload.rollout,
      metadata: { ...described, annotations: live.metadata.annotations ?? {} },
    };
  };

  const notTheRollout = (
    payload: Extract<NotifyPayload, { kind: 'event' | 'delivery' }>,
    rollout: string,
  ): JobOutcome => {
    metrics.notificationsTotal.inc({ trigger: '(unplanned)', service: '(unplanned)', result: 'invalid' });
    log.warn(
      { rollout, trigger: payload.trigger, key: payload.key },
      'notification not sent: the Rollout it is about is gone, or is not the one the job describes',
    );
    return { kind: 'stalled', reason: 'the Rollout is gone or is not the one the job describes' };
  };

  const runEvent = async (payload: Extract<NotifyPayload, { kind: 'event' }>): Promise<JobOutcome> => {
    const rollout = `${payload.namespace}/${payload.name}`;
    const notifications = await configOrStall(payload.trigger, { rollout });
    if ('kind' in notifications) return notifications;
    const subscribed = await withLiveSubscriptions(payload);
    if (subscribed === undefined) return notTheRollout(payload, rollout);
    const plan = planDeliveries(
      {
        trigger: payload.trigger,
        key: payload.key,
        rollout: subscribed,
        ...whereOf(payload),
        ...(payload.extra !== undefined && { extra: payload.extra }),
      },
      notifications,
    );
    for (const problem of plan.problems) invalid(payload.trigger, problem, { rollout });
    // Each delivery job is a reference: the event again, and which of its deliveries (see runDelivery).
    for (const delivery of plan.deliveries)
      await queue.add({
        v: 1,
        kind: 'delivery',
        ...(payload.cluster !== undefined && { cluster: payload.cluster }),
        key: delivery.key,
        trigger: delivery.trigger,
        namespace: payload.namespace,
        name: payload.name,
        service: delivery.service,
        recipient: delivery.recipient,
        template: delivery.template,
        event: payload.key,
        rollout: payload.rollout,
        ...(payload.extra !== undefined && { extra: payload.extra }),
      });
    return { kind: 'done' };
  };

  /** Sends one planned delivery and marks it sent; a transient failure is thrown while attempts are left. */
  const send = async (
    payload: Pick<NotifyPayload, 'kind' | 'key'>,
    delivery: Delivery,
    service: ServiceConfig,
    attempt: number,
    subject: Record<string, string>,
  ): Promise<JobOutcome> => {
    const labels = { trigger: delivery.trigger, service: delivery.service };
    try {
      const result = await sendNotification(
        {
          service,
          recipient: delivery.recipient,
          notification: delivery.notification,
          templateKey: `template.${delivery.template}`,
        },
        http,
        calls,
      );
      await queue.markSent(payload);
      metrics.notificationsTotal.inc({ ...labels, result });
      log.info(
        { ...subject, ...labels, recipient: delivery.recipient, template: delivery.template, result },
        'notification sent',
      );
      return { kind: 'done' };
    } catch (err) {
      if (!(err instanceof NotificationDeliveryError)) throw err;
      const last = attempt >= ATTEMPTS_BY_QUEUE.notify;
      if (err.transient && !last) {
        metrics.notificationsTotal.inc({ ...labels, result: 'retried' });
        throw err;
      }
      metrics.notificationsTotal.inc({ ...labels, result: 'failed' });
      log.error(
        { ...subject, ...labels, recipient: delivery.recipient, err: err.message },
        'notification given up',
      );
      return { kind: 'stalled', reason: err.message };
    }
  };

  const unplanned = (payload: NotifyPayload, subject: Record<string, string>): JobOutcome => {
    // Metric labels never come from an unplanned job (their number would be the sender's to choose).
    metrics.notificationsTotal.inc({ trigger: '(unplanned)', service: '(unplanned)', result: 'invalid' });
    log.error(
      {
        ...subject,
        trigger: payload.trigger,
        ...('service' in payload && {
          service: payload.service,
          recipient: payload.recipient,
          template: payload.template,
        }),
      },
      'notification not sent: the configuration plans no such delivery (changed since, or the job was not written by Rollgate)',
    );
    return { kind: 'stalled', reason: 'the configuration plans no such delivery' };
  };

  const runDelivery = async (
    payload: Extract<NotifyPayload, { kind: 'delivery' }>,
    attempt: number,
  ): Promise<JobOutcome> => {
    const rollout = `${payload.namespace}/${payload.name}`;
    if (await queue.wasSent(payload)) return { kind: 'done' };
    const notifications = await configOrStall(payload.trigger, { rollout });
    if ('kind' in notifications) return notifications;
    // Redis is not a trust root: what is sent, where and with which headers is planned again from the
    // configuration; the job only says which planned delivery it is.
    const subscribed = await withLiveSubscriptions(payload);
    if (subscribed === undefined) return notTheRollout(payload, rollout);
    const delivery = planDeliveries(
      {
        trigger: payload.trigger,
        key: payload.event,
        rollout: subscribed,
        ...whereOf(payload),
        ...(payload.extra !== undefined && { extra: payload.extra }),
      },
      notifications,
    ).deliveries.find((planned) => planned.key === payload.key);
    const service = delivery && notifications.services.get(delivery.service);
    if (delivery === undefined || service === undefined) return unplanned(payload, { rollout });
    return send(payload, delivery, service, attempt, { rollout });
  };

  /**
   * A config source's `notifications`; a GitSource's (`<namespace>.<name>`: config names hold no dot) its
   * object's subscribe annotations, read now, so a process without the source registry (a reconciler
   * alone) still finds who is subscribed, and an annotation changed since the failure is obeyed.
   */
  const subscriptionsOfObject = async (source: string): Promise<Record<string, string> | undefined> => {
    const dot = source.indexOf('.');
    if (dot <= 0) return undefined;
    try {
      const object = (await kubeCall(
        { verb: 'get', kind: 'GitSource', namespace: source.slice(0, dot), name: source.slice(dot + 1) },
        () =>
          runtime.kube.clients.custom.getNamespacedCustomObject({
            group: ROLLGATE_API_GROUP,
            version: 'v1alpha1',
            namespace: source.slice(0, dot),
            plural: GIT_SOURCE_PLURAL,
            name: source.slice(dot + 1),
          }),
      )) as { metadata?: { annotations?: Record<string, string> } };
      return subscribeEntriesOf(object.metadata?.annotations);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const lookUpSubscriptions =
    options.sourceSubscriptions ??
    ((source: string) => {
      const configured = config.sources.find((s) => s.name === source);
      return configured !== undefined ? configured.notifications : subscriptionsOfObject(source);
    });

  /** A source's event planned with who is subscribed now; undefined when the source is gone. */
  const sourceEvent = async (
    payload: Extract<NotifyPayload, { kind: 'source-event' | 'source-delivery' }>,
  ): Promise<Parameters<typeof planDeliveries>[0] | undefined> => {
    const subscriptions = await lookUpSubscriptions(payload.source);
    if (subscriptions === undefined) return undefined;
    return {
      trigger: payload.trigger,
      key: payload.kind === 'source-event' ? payload.key : payload.event,
      source: payload.data as SourceTemplateData,
      subscriptions,
      ...whereOf(payload),
    };
  };

  /** The object a notification is about was deleted since: nothing to send, counted and said once. */
  const subjectGone = (
    payload: NotifyPayload,
    subject: { source: string } | { fleet: string },
    what: string,
  ): JobOutcome => {
    metrics.notificationsTotal.inc({ trigger: '(unplanned)', service: '(unplanned)', result: 'invalid' });
    log.warn(
      { ...subject, trigger: payload.trigger, key: payload.key },
      `notification not sent: ${what} it is about is gone`,
    );
    return { kind: 'stalled', reason: `${what} is gone` };
  };
  const sourceGone = (payload: NotifyPayload, source: string): JobOutcome =>
    subjectGone(payload, { source }, 'the source');

  const runSourceEvent = async (
    payload: Extract<NotifyPayload, { kind: 'source-event' }>,
  ): Promise<JobOutcome> => {
    const { source } = payload;
    const notifications = await configOrStall(payload.trigger, { source });
    if ('kind' in notifications) return notifications;
    const event = await sourceEvent(payload);
    if (event === undefined) return sourceGone(payload, source);
    const plan = planDeliveries(event, notifications);
    for (const problem of plan.problems) invalid(payload.trigger, problem, { source });
    for (const delivery of plan.deliveries)
      await queue.add({
        v: 1,
        kind: 'source-delivery',
        ...(payload.cluster !== undefined && { cluster: payload.cluster }),
        key: delivery.key,
        trigger: delivery.trigger,
        source,
        service: delivery.service,
        recipient: delivery.recipient,
        template: delivery.template,
        event: payload.key,
        data: payload.data,
      });
    return { kind: 'done' };
  };

  const runSourceDelivery = async (
    payload: Extract<NotifyPayload, { kind: 'source-delivery' }>,
    attempt: number,
  ): Promise<JobOutcome> => {
    const { source } = payload;
    if (await queue.wasSent(payload)) return { kind: 'done' };
    const notifications = await configOrStall(payload.trigger, { source });
    if ('kind' in notifications) return notifications;
    const event = await sourceEvent(payload);
    if (event === undefined) return sourceGone(payload, source);
    // As for a Rollout: planned again from the configuration, the job only says which delivery it is.
    const delivery = planDeliveries(event, notifications).deliveries.find((d) => d.key === payload.key);
    const service = delivery && notifications.services.get(delivery.service);
    if (delivery === undefined || service === undefined) return unplanned(payload, { source });
    return send(payload, delivery, service, attempt, { source });
  };

  /**
   * A Fleet's event planned with who is subscribed now (the Fleet's annotations, read from the local
   * cluster, where Fleets live); undefined when the Fleet is gone.
   */
  const fleetEvent = async (
    payload: Extract<NotifyPayload, { kind: 'fleet-event' | 'fleet-delivery' }>,
  ): Promise<Parameters<typeof planDeliveries>[0] | undefined> => {
    const { namespace, name } = payload;
    let object: { metadata?: { annotations?: Record<string, string> } };
    try {
      object = (await kubeCall({ verb: 'get', kind: 'Fleet', namespace, name }, () =>
        runtime.kube.clients.custom.getNamespacedCustomObject({
          group: ROLLGATE_API_GROUP,
          version: 'v1alpha1',
          namespace,
          plural: 'fleets',
          name,
        }),
      )) as typeof object;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    return {
      trigger: payload.trigger,
      key: payload.kind === 'fleet-event' ? payload.key : payload.event,
      fleet: payload.data as FleetTemplateData,
      subscriptions: subscribeEntriesOf(object.metadata?.annotations),
      ...whereOf(payload),
    };
  };

  const fleetGone = (payload: NotifyPayload, fleet: string): JobOutcome =>
    subjectGone(payload, { fleet }, 'the Fleet');

  const runFleetEvent = async (
    payload: Extract<NotifyPayload, { kind: 'fleet-event' }>,
  ): Promise<JobOutcome> => {
    const fleet = `${payload.namespace}/${payload.name}`;
    const notifications = await configOrStall(payload.trigger, { rollout: fleet });
    if ('kind' in notifications) return notifications;
    const event = await fleetEvent(payload);
    if (event === undefined) return fleetGone(payload, fleet);
    const plan = planDeliveries(event, notifications);
    for (const problem of plan.problems) invalid(payload.trigger, problem, { rollout: fleet });
    for (const delivery of plan.deliveries)
      await queue.add({
        v: 1,
        kind: 'fleet-delivery',
        ...(payload.cluster !== undefined && { cluster: payload.cluster }),
        key: delivery.key,
        trigger: delivery.trigger,
        namespace: payload.namespace,
        name: payload.name,
        service: delivery.service,
        recipient: delivery.recipient,
        template: delivery.template,
        event: payload.key,
        data: payload.data,
      });
    return { kind: 'done' };
  };

  const runFleetDelivery = async (
    payload: Extract<NotifyPayload, { kind: 'fleet-delivery' }>,
    attempt: number,
  ): Promise<JobOutcome> => {
    const fleet = `${payload.namespace}/${payload.name}`;
    if (await queue.wasSent(payload)) return { kind: 'done' };
    const notifications = await configOrStall(payload.trigger, { rollout: fleet });
    if ('kind' in notifications) return notifications;
    const event = await fleetEvent(payload);
    if (event === undefined) return fleetGone(payload, fleet);
    // As for a Rollout: planned again from the configuration, the job only says which delivery it is.
    const delivery = planDeliveries(event, notifications).deliveries.find((d) => d.key === payload.key);
    const service = delivery && notifications.services.get(delivery.service);
    if (delivery === undefined || service === undefined) return unplanned(payload, { fleet });
    return send(payload, delivery, service, attempt, { fleet });
  };

  const worker = startWorker(
    'notify',
    (payload, context) =>
      payload.kind === 'event'
        ? runEvent(payload)
        : payload.kind === 'delivery'
          ? runDelivery(payload, context.attempt)
          : payload.kind === 'source-event'
            ? runSourceEvent(payload)
            : payload.kind === 'source-delivery'
              ? runSourceDelivery(payload, context.attempt)
              : payload.kind === 'fleet-event'
                ? runFleetEvent(payload)
                : runFleetDelivery(payload, context.attempt),
    {
      connection: redis,
      prefix: config.redis.prefix,
      concurrency: Math.min(4, config.workers.concurrency),
      lockDuration: config.workers.lockDurationMs,
      logger: log,
      onJobFinished: (event) => metrics.observeJobFinished(event),
    },
  );

  const eventFor = (
    rollout: RolloutObject,
    intent: { trigger: BuiltinTrigger; revision: string; step: string },
    extra?: Record<string, unknown>,
    cluster?: string,
  ): void => {
    const { name, namespace, uid } = rollout.metadata ?? {};
    if (!name || !namespace) return;
    enqueue({
      v: 1,
      kind: 'event',
      // The local cluster's jobs stay as they were; another cluster's name it.
      ...(cluster !== undefined && cluster !== localCluster && { cluster }),
      key: eventKey({ namespace, name, uid }, intent),
      trigger: intent.trigger,
      namespace,
      name,
      rollout,
      ...(extra !== undefined && { extra }),
    });
  };

  return {
    queue,
    worker,
    onTransition(transition, cluster) {
      const raw = transition.raw as RolloutObject;
      if (!hasSubscriptions(raw.metadata?.annotations)) return;
      const intents = detectTransitions(
        transition.before as (Partial<RolloutStatus> & Record<string, unknown>) | undefined,
        (transition.after ?? {}) as Partial<RolloutStatus> & Record<string, unknown>,
        transition.scaled as ScaledReplicaSet[],
      );
      if (intents.length === 0) return;
      const rollout = snapshot(transition.raw, transition.after);
      for (const intent of intents) eventFor(rollout, intent, undefined, cluster);
    },
    onFleetStopped(stopped) {
      enqueue({
        v: 1,
        kind: 'fleet-event',
        cluster: stopped.cluster,
        key: fleetStoppedKey(stopped),
        trigger: 'on-fleet-stopped',
        namespace: stopped.namespace,
        name: stopped.fleet,
        data: fleetTemplateData(stopped),
      });
    },
    onPromotion(trigger, rollout, promotion) {
      if (!hasSubscriptions(rollout.metadata?.annotations)) return;
      const status = (rollout.status ?? {}) as { currentPodHash?: string };
      eventFor(
        snapshot(rollout, rollout.status),
        { trigger, revision: status.currentPodHash ?? '', step: `pr-${promotion.pullRequest.number}` },
        { promotion },
      );
    },
    async settled() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    async stop(stopOptions) {
      await Promise.allSettled([...pending]);
      await worker.stop(stopOptions);
      await queue.close();
    },
  };
}
