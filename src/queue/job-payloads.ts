// Typed, versioned payloads of the jobs on each queue, validated when a worker picks a job up.
import { z } from 'zod';
import type { QueueName } from './queue-names.ts';
import { InvalidJobPayloadError } from './invalid-job-payload-error.ts';

/** A reconcile job names a rollout and nothing else: the worker reads the latest state itself. */
export const reconcilePayloadSchema = z.object({
  v: z.literal(1),
  namespace: z.string().min(1),
  name: z.string().min(1),
});
export type ReconcilePayload = z.infer<typeof reconcilePayloadSchema>;

/** Why a poll was asked for. */
export const pollReasonSchema = z.enum(['schedule', 'webhook', 'start']);
export type PollReason = z.infer<typeof pollReasonSchema>;

/** A poll job: check one source (by its configured name) for a new commit. */
export const pollPayloadSchema = z.object({
  v: z.literal(1),
  source: z.string().min(1),
  reason: pollReasonSchema,
});
export type PollPayload = z.infer<typeof pollPayloadSchema>;

/** One object a sync job carries: what changed in Git between two commits. */
export const syncObjectSchema = z.object({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  namespace: z.string().optional(),
  name: z.string().min(1),
  /** Path of the file in the repository, for error messages and events. */
  file: z.string().optional(),
  change: z.enum(['added', 'changed', 'removed']),
});
export type SyncObject = z.infer<typeof syncObjectSchema>;

/**
 * A sync job: bring one source's objects in the cluster to its newest commit. Only `source` is read:
 * the sync moves to the newest head a poll recorded when it starts and diffs for itself (see
 * docs/sync.md). `commit` (the head the poll saw) and `previousCommit` are there for whoever inspects
 * the queue; `objects` is sent empty. The shape is version 1 and may grow fields.
 */
export const syncPayloadSchema = z.object({
  v: z.literal(1),
  source: z.string().min(1),
  commit: z.string().min(1),
  /** The last commit synced before this one, when known (`null` on a first sync). */
  previousCommit: z.string().nullable().optional(),
  objects: z.array(syncObjectSchema),
});
export type SyncPayload = z.infer<typeof syncPayloadSchema>;

/** A promote job: look at one promotion (by its configured name) for one rollout of its `from` source. */
export const promotePayloadSchema = z.object({
  v: z.literal(1),
  promotion: z.string().min(1),
  namespace: z.string().min(1),
  name: z.string().min(1),
});
export type PromotePayload = z.infer<typeof promotePayloadSchema>;

/**
 * A notify job. `event`: one trigger fired for one Rollout (`key` is the transition; `rollout` is the
 * object as templates see it); the worker plans its deliveries and enqueues one `delivery` job each.
 * `delivery`: one rendered notification to one recipient of one service (secrets are never in a job:
 * the service's settings are read from the cluster when it is sent).
 */
export const notifyPayloadSchema = z.discriminatedUnion('kind', [
  z.object({
    v: z.literal(1),
    kind: z.literal('event'),
    key: z.string().min(1),
    trigger: z.string().min(1),
    namespace: z.string().min(1),
    name: z.string().min(1),
    rollout: z.record(z.string(), z.unknown()),
    extra: z.record(z.string(), z.unknown()).optional(),
  }),
  z.object({
    v: z.literal(1),
    kind: z.literal('delivery'),
    key: z.string().min(1),
    trigger: z.string().min(1),
    namespace: z.string().min(1),
    name: z.string().min(1),
    service: z.string().min(1),
    recipient: z.string(),
    template: z.string().min(1),
    notification: z.record(z.string(), z.unknown()),
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
}

const schemas: { [N in QueueName]: z.ZodType<PayloadByQueue[N]> } = {
  poll: pollPayloadSchema,
  sync: syncPayloadSchema,
  reconcile: reconcilePayloadSchema,
  promote: promotePayloadSchema,
  notify: notifyPayloadSchema,
};

/** Validates a job's data read from Redis; throws InvalidJobPayloadError when it is not a payload of `queue`. */
export function parseJobPayload<N extends QueueName>(
  queue: N,
  data: unknown,
  jobId?: string,
): PayloadByQueue[N] {
  const result = schemas[queue].safeParse(data);
  if (!result.success) {
    throw new InvalidJobPayloadError(queue, jobId, z.prettifyError(result.error));
  }
  return result.data;
}

/** The rollout key `namespace/name` a reconcile payload stands for. */
export function rolloutKey(payload: Pick<ReconcilePayload, 'namespace' | 'name'>): string {
  return `${payload.namespace}/${payload.name}`;
}

/** Splits a rollout key `namespace/name`; throws RangeError on anything else. */
export function parseRolloutKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1 || key.indexOf('/', slash + 1) !== -1) {
    throw new RangeError(`rollout key must be "namespace/name", got ${JSON.stringify(key)}`);
  }
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
