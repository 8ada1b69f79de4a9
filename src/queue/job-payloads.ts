// Typed, versioned payloads of the jobs on each queue, validated when a worker picks a job up.
import { z } from 'zod';
import type { QueueName } from './queue-names.ts';
import { InvalidJobPayloadError } from './invalid-job-payload-error.ts';

/*
 * Every payload is read back from Redis, which anyone who can reach it may write: each field is bounded,
 * and a job carries references (a source, a rollout, a promotion, a service and template by name), never
 * a destination, a commit to deploy or a rendered message. The worker resolves and checks what a
 * reference stands for against Git, the cluster or the configuration (docs/security.md, "Redis").
 */

/** True when `text` holds no control character (CR, LF, NUL, …). */
function printable(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return false;
  }
  return true;
}
const noControlCharacters = { message: 'holds a control character' };

/** A DNS label: a namespace, a source or promotion name (config/schema.ts holds the same rule). */
const dnsLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label');
/**
 * A source's name: a configured one (a DNS label) or a GitSource's `<namespace>.<name>` (a label, a dot,
 * an object name), at most 63 characters in all: it is a label value on what the source applies.
 */
const sourceName = z
  .string()
  .min(1)
  .max(63)
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$/,
    'must be a source name (a DNS label, or <namespace>.<name> of a GitSource)',
  );
/** A Kubernetes object name (a DNS subdomain, as a Rollout's name is). */
const objectName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a DNS subdomain');
/** A name from a notification ConfigMap key (`service.<type>.<name>`, `template.<name>`, `trigger.<name>`). */
const configKeyName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[-._a-zA-Z0-9]+$/, 'must be a ConfigMap key part')
  // Looked up in maps and objects by the worker: a prototype key is never a name.
  .refine((name) => !['__proto__', 'constructor', 'prototype'].includes(name), {
    message: 'is not a name',
  });
/** A deduplication key: parts joined by `|` (see plan-deliveries.ts). */
/** A registered cluster's name (Argo CD's cluster Secrets allow more than DNS names: printable text). */
const clusterName = z.string().min(1).max(253).refine(printable, noControlCharacters);
const keyField = z.string().min(1).max(2048).refine(printable, noControlCharacters);
/** The largest plain-data object a job may carry (a Rollout as templates see it): 1 MiB of JSON. */
const MAX_OBJECT_BYTES = 1024 * 1024;
/** An object passed as template data: a record within {@link MAX_OBJECT_BYTES}. */
const objectField = z
  .record(z.string(), z.unknown())
  .refine((value) => JSON.stringify(value).length <= MAX_OBJECT_BYTES, {
    message: `larger than ${MAX_OBJECT_BYTES} bytes of JSON`,
  });

/**
 * A reconcile job names one object and nothing else: the worker reads the latest state itself. Without
 * `kind` (every job written before standalone runs were measured) it names a Rollout; `analysisRun`
 * names an AnalysisRun no Rollout owns, measured on its own (docs/analysis.md, "Standalone runs");
 * `experiment` names an Experiment (docs/experiments.md).
 */
// One object with an optional `kind`, not a union: a union's error has no path, and a refused job must
// name the field that was wrong (job-payload-fuzz.test.ts).
export const reconcilePayloadSchema = z.object({
  v: z.literal(1),
  kind: z.enum(['rollout', 'analysisRun', 'experiment']).optional(),
  namespace: dnsLabel,
  name: objectName,
});
export type ReconcilePayload = z.infer<typeof reconcilePayloadSchema>;

/** A fleet job: one pass of the fleet planner over one Fleet of the local cluster. */
export const fleetPayloadSchema = z.object({
  v: z.literal(1),
  namespace: dnsLabel,
  name: objectName,
});
export type FleetPayload = z.infer<typeof fleetPayloadSchema>;

/** Why a poll was asked for. */
export const pollReasonSchema = z.enum(['schedule', 'webhook', 'start']);
export type PollReason = z.infer<typeof pollReasonSchema>;

/** A poll job: check one source (by its configured name) for a new commit. */
export const pollPayloadSchema = z.object({
  v: z.literal(1),
  source: sourceName,
  reason: pollReasonSchema,
});
export type PollPayload = z.infer<typeof pollPayloadSchema>;

/** One object a sync job carries: what changed in Git between two commits. */
export const syncObjectSchema = z.object({
  apiVersion: z.string().min(1).max(253),
  kind: z.string().min(1).max(253),
  namespace: z.string().max(63).optional(),
  name: z.string().min(1).max(253),
  /** Path of the file in the repository, for error messages and events. */
  file: z.string().max(4096).optional(),
  change: z.enum(['added', 'changed', 'removed']),
});
export type SyncObject = z.infer<typeof syncObjectSchema>;

/**
 * A sync job: bring one source's objects in the cluster to its newest commit. Only `source` is read:
 * the sync moves to the newest head a poll recorded when it starts, checked against the remote branch
 * unless this process's own ref check saw it, and diffs for itself (see docs/sync.md). `commit` (the
 * head the poll saw) and `previousCommit` are there for whoever inspects the queue and are never
 * fetched or applied; `objects` is sent empty and never read. The shape is version 1 and may grow fields.
 */
export const syncPayloadSchema = z.object({
  v: z.literal(1),
  source: sourceName,
  commit: z.string().min(1).max(64),
  /** The last commit synced before this one, when known (`null` on a first sync). */
  previousCommit: z.string().max(64).nullable().optional(),
  objects: z.array(syncObjectSchema).max(1000),
});
export type SyncPayload = z.infer<typeof syncPayloadSchema>;

/** A promote job: look at one promotion (by its configured name) for one rollout of its `from` source. */
export const promotePayloadSchema = z.object({
  v: z.literal(1),
  promotion: dnsLabel,
  namespace: dnsLabel,
  name: objectName,
});
export type PromotePayload = z.infer<typeof promotePayloadSchema>;

/** A revert job: write back the aborted `revision` of one Rollout synced by `source` (onAbort.revert). */
export const revertPayloadSchema = z.object({
  v: z.literal(1),
  source: z.string().min(1).max(253),
  namespace: dnsLabel,
  name: objectName,
  revision: z.string().min(1).max(64),
});
export type RevertPayload = z.infer<typeof revertPayloadSchema>;

/**
 * A notify job. `event`: one trigger fired for one Rollout (`key` is the transition; `rollout` is the
 * object as templates see it); the worker plans its deliveries and enqueues one `delivery` job each.
 * `delivery`: a reference to one planned delivery (`key`) of one event (`event`, with the event's
 * template data), never its destination nor its rendered text: the worker plans the event again from
 * the configuration and sends the delivery with that key, so the service's URL, headers, recipient URL
 * and template all come from the ConfigMap and Secret, read when it is sent. `service`, `recipient`
 * and `template` name the planned delivery for logs and metrics; a delivery the configuration does not
 * plan is not sent.
 */
export const notifyPayloadSchema = z.discriminatedUnion('kind', [
  z.object({
    v: z.literal(1),
    kind: z.literal('event'),
    /** The cluster it is about (absent: the local one, as every job written before clusters). */
    cluster: clusterName.optional(),
    key: keyField,
    trigger: configKeyName,
    namespace: dnsLabel,
    name: objectName,
    rollout: objectField,
    extra: objectField.optional(),
  }),
  z.object({
    v: z.literal(1),
    kind: z.literal('delivery'),
    /** The cluster it is about (absent: the local one, as every job written before clusters). */
    cluster: clusterName.optional(),
    key: keyField,
    trigger: configKeyName,
    namespace: dnsLabel,
    name: objectName,
    service: configKeyName,
    recipient: z.string().max(1024).refine(printable, noControlCharacters),
    template: configKeyName,
    /** The key of the event this delivery was planned from. */
    event: keyField,
    rollout: objectField,
    extra: objectField.optional(),
  }),
  /**
   * A source trigger fired (detect-source-transitions.ts): `source` is the internal source name, `data`
   * the source as templates see it. Who is subscribed is read again when the job runs, as for a Rollout.
   */
  z.object({
    v: z.literal(1),
    kind: z.literal('source-event'),
    /** The cluster it is about (absent: the local one, as every job written before clusters). */
    cluster: clusterName.optional(),
    key: keyField,
    trigger: configKeyName,
    source: objectName,
    data: objectField,
  }),
  /** One planned delivery of a source event, by reference (see `delivery`). */
  z.object({
    v: z.literal(1),
    kind: z.literal('source-delivery'),
    /** The cluster it is about (absent: the local one, as every job written before clusters). */
    cluster: clusterName.optional(),
    key: keyField,
    trigger: configKeyName,
    source: objectName,
    service: configKeyName,
    recipient: z.string().max(1024).refine(printable, noControlCharacters),
    template: configKeyName,
    event: keyField,
    data: objectField,
  }),
  /**
   * A Fleet stopped (src/notify/fleet-stopped.ts): `data` is the stop as the fleet controller reported it.
   * Who is subscribed (the Fleet's annotations) is read again when the job runs, as for a Rollout.
   */
  z.object({
    v: z.literal(1),
    kind: z.literal('fleet-event'),
    cluster: clusterName.optional(),
    key: keyField,
    trigger: configKeyName,
    namespace: dnsLabel,
    name: objectName,
    data: objectField,
  }),
  /** One planned delivery of a fleet event, by reference (see `delivery`). */
  z.object({
    v: z.literal(1),
    kind: z.literal('fleet-delivery'),
    cluster: clusterName.optional(),
    key: keyField,
    trigger: configKeyName,
    namespace: dnsLabel,
    name: objectName,
    service: configKeyName,
    recipient: z.string().max(1024).refine(printable, noControlCharacters),
    template: configKeyName,
    event: keyField,
    data: objectField,
  }),
]);
export type NotifyPayload = z.infer<typeof notifyPayloadSchema>;

/** The payload type of each queue. */
export interface PayloadByQueue {
  poll: PollPayload;
  sync: SyncPayload;
  reconcile: ReconcilePayload;
  promote: PromotePayload;
  notify: NotifyPayload;
  fleet: FleetPayload;
  revert: RevertPayload;
}

const schemas: { [N in QueueName]: z.ZodType<PayloadByQueue[N]> } = {
  poll: pollPayloadSchema,
  sync: syncPayloadSchema,
  reconcile: reconcilePayloadSchema,
  promote: promotePayloadSchema,
  notify: notifyPayloadSchema,
  fleet: fleetPayloadSchema,
  revert: revertPayloadSchema,
};

/** Validates a job's data read from Redis; throws InvalidJobPayloadError when it is not a payload of `queue`. */
export function parseJobPayload<N extends QueueName>(
  queue: N,
  data: unknown,
  jobId?: string,
): PayloadByQueue[N] {
  const result = schemas[queue].safeParse(data);
  if (!result.success) {
    const field = result.error.issues[0]?.path.map(String).join('.') ?? '';
    throw new InvalidJobPayloadError(queue, jobId, field, z.prettifyError(result.error));
  }
  return result.data;
}

/** The rollout key `namespace/name` a reconcile payload stands for. */
export function rolloutKey(payload: Pick<ReconcilePayload, 'namespace' | 'name'>): string {
  return `${payload.namespace}/${payload.name}`;
}

/** The middle part of a standalone AnalysisRun's job key: `namespace/analysisruns/name`. */
const ANALYSIS_RUN_KEY_PART = 'analysisruns';
/** The middle part of an Experiment's job key: `namespace/experiments/name`. */
const EXPERIMENT_KEY_PART = 'experiments';

/**
 * The deduplication key of a reconcile job: `namespace/name` for a Rollout, `namespace/analysisruns/name`
 * for a standalone AnalysisRun, `namespace/experiments/name` for an Experiment (two slashes: never a Rollout's key, so a run and a Rollout of one name
 * are two jobs). The namespace comes first in both, where the namespace share reads it.
 */
export function reconcileJobKey(payload: Pick<ReconcilePayload, 'namespace' | 'name' | 'kind'>): string {
  if (payload.kind === 'analysisRun') return `${payload.namespace}/${ANALYSIS_RUN_KEY_PART}/${payload.name}`;
  if (payload.kind === 'experiment') return `${payload.namespace}/${EXPERIMENT_KEY_PART}/${payload.name}`;
  return rolloutKey(payload);
}

/** The payload a reconcile job key stands for; throws RangeError on anything else. */
export function parseReconcileJobKey(key: string): ReconcilePayload {
  const parts = key.split('/');
  if (parts.length === 3 && parts[1] === ANALYSIS_RUN_KEY_PART && parts[0] && parts[2])
    return { v: 1, kind: 'analysisRun', namespace: parts[0], name: parts[2] };
  if (parts.length === 3 && parts[1] === EXPERIMENT_KEY_PART && parts[0] && parts[2])
    return { v: 1, kind: 'experiment', namespace: parts[0], name: parts[2] };
  return { v: 1, ...parseRolloutKey(key) };
}

/** Splits a rollout key `namespace/name`; throws RangeError on anything else. */
export function parseRolloutKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1 || key.indexOf('/', slash + 1) !== -1) {
    throw new RangeError(`rollout key must be "namespace/name", got ${JSON.stringify(key)}`);
  }
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
