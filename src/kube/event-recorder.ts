// Kubernetes Events on a Rollout (core/v1), deduplicated: the same type+reason+message bumps a count instead of adding an Event.
import type { CoreV1Event, CoreV1Api } from '@kubernetes/client-node';
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import { MERGE_PATCH, FIELD_MANAGER } from './client.ts';
import { isNotFound, kubeCall, type KubeApiError } from './errors.ts';

/** The object an Event is about. */
export interface EventSubject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string | undefined;
}

/** One Event to record. */
export interface EventInput {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** What recording did: a new Event, a count bump on an existing one, or nothing (recording failed). */
export type EventWriteResult = 'created' | 'updated' | 'failed';

const MAX_MESSAGE = 1024;

/** FNV-1a, 32 bit: a short stable digest for Event names (no crypto needed, collisions only merge counts). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * Records Events. The Event name is derived from subject + type + reason + message, so the same
 * Event from any worker, before or after a restart, lands on one object whose `count` and
 * `lastTimestamp` move. Recording is best effort: a failure is logged and reported, never thrown,
 * because an Event must never stop a rollout.
 */
export class EventRecorder {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly core: CoreV1Api,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly component = 'rollgate',
  ) {}

  /** The deterministic Event name for this subject and event. */
  static eventName(subject: EventSubject, event: EventInput): string {
    return `${subject.name}.${fnv1a(`${subject.uid ?? ''}|${event.type}|${event.reason}|${event.message}`)}`;
  }

  async record(subject: EventSubject, event: EventInput): Promise<EventWriteResult> {
    const name = EventRecorder.eventName(subject, event);
    const namespace = subject.namespace;
    const now = this.clock.now();
    try {
      const known = this.counts.get(name);
      if (known !== undefined) return await this.bump(namespace, name, known, now);
      const body: CoreV1Event = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: subject.apiVersion,
          kind: subject.kind,
          namespace,
          name: subject.name,
          uid: subject.uid,
        },
        type: event.type,
        reason: event.reason,
        message: event.message.slice(0, MAX_MESSAGE),
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component: this.component },
        reportingComponent: this.component,
        reportingInstance: this.component,
      };
      try {
        await kubeCall({ verb: 'create', kind: 'Event', namespace, name }, () =>
          this.core.createNamespacedEvent({ namespace, body, fieldManager: FIELD_MANAGER }),
        );
        this.counts.set(name, 1);
        return 'created';
      } catch (err) {
        if ((err as KubeApiError).code !== 'kube.conflict') throw err;
        // Another worker (or an earlier life of this one) recorded it: bump that one.
        const existing = await kubeCall({ verb: 'get', kind: 'Event', namespace, name }, () =>
          this.core.readNamespacedEvent({ namespace, name }),
        );
        return await this.bump(namespace, name, existing.count ?? 1, now);
      }
    } catch (err) {
      this.logger.warn({ err, event: name, reason: event.reason }, 'could not record event');
      return 'failed';
    }
  }

  private async bump(namespace: string, name: string, count: number, now: Date): Promise<EventWriteResult> {
    try {
      await kubeCall({ verb: 'patch', kind: 'Event', namespace, name }, () =>
        this.core.patchNamespacedEvent(
          {
            namespace,
            name,
            body: { count: count + 1, lastTimestamp: now.toISOString() },
            fieldManager: FIELD_MANAGER,
          },
          MERGE_PATCH,
        ),
      );
      this.counts.set(name, count + 1);
      return 'updated';
    } catch (err) {
      // Events expire (TTL): forget it so the next record creates it afresh.
      if (isNotFound(err)) this.counts.delete(name);
      throw err;
    }
  }
}
