// From a fired trigger to the messages to send: subscriptions × trigger conditions × templates, rendered.
import { NotificationConfigError } from './notification-config-error.ts';
import type { NotificationConfig } from './notification-config.ts';
import type { RenderedNotification } from './notification-template.ts';
import type { FleetTemplateData } from './fleet-stopped.ts';
import type { SourceTemplateData } from './source-template-data.ts';
import { subscriptionsOf } from './subscriptions.ts';

/** The cluster Rollgate runs in, as templates name it when an event does not say (Argo CD's name). */
export const DEFAULT_LOCAL_CLUSTER = 'in-cluster';

/**
 * The transition a notification is about; `key` identifies it for deduplication. It is about a Rollout
 * (subscribed by its annotations), a source or a Fleet (subscribed by `subscriptions`, an annotations map).
 */
export type NotificationEvent = {
  trigger: string;
  /** `<rollout uid or namespace/name>|<revision>|<trigger>|<step>`, or a source's (detect-source-transitions.ts). */
  key: string;
  /** More template data (`.promotion` for the promotion triggers). */
  extra?: Record<string, unknown>;
  /**
   * The cluster the Rollout (or the source's objects, or the Fleet's stop) is in: templates read it as
   * `.cluster`; absent: the local one.
   */
  cluster?: string | undefined;
  /** The local cluster's name (`.localCluster`), so a template can name only another one. */
  localCluster?: string | undefined;
} & (
  | {
      /** The Rollout as it was after the transition (what templates read as `.rollout`). */
      rollout: { metadata?: { uid?: string; annotations?: Record<string, string> } } & Record<
        string,
        unknown
      >;
      source?: undefined;
      fleet?: undefined;
    }
  | {
      /** The source after the transition (what templates read as `.source`). */
      source: SourceTemplateData;
      /** The source's subscribe entries, in the grammar of the subscribe annotations. */
      subscriptions: Readonly<Record<string, string>> | undefined;
      rollout?: undefined;
      fleet?: undefined;
    }
  | {
      /** The Fleet that stopped (what templates read as `.fleet`). */
      fleet: FleetTemplateData;
      /** The Fleet's subscribe annotations. */
      subscriptions: Readonly<Record<string, string>> | undefined;
      rollout?: undefined;
      source?: undefined;
    }
);

/** One message to one recipient of one service. */
export interface Delivery {
  /** Unique per event, service, recipient and template (or per `oncePer` value instead of the event). */
  key: string;
  trigger: string;
  service: string;
  recipient: string;
  template: string;
  notification: RenderedNotification;
}

/** What to send, and what could not be planned (each error names the ConfigMap key or annotation to fix). */
export interface DeliveryPlan {
  deliveries: Delivery[];
  problems: NotificationConfigError[];
}

/** The identity of an event: the same transition seen twice gives the same key. */
export function eventKey(
  rollout: { namespace: string; name: string; uid?: string | undefined },
  intent: { trigger: string; revision: string; step: string },
): string {
  return [
    rollout.uid ?? `${rollout.namespace}/${rollout.name}`,
    intent.revision,
    intent.trigger,
    intent.step,
  ].join('|');
}

function printedKeyPart(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}

/**
 * Plans the deliveries of one event: every subscription of the Rollout (or source) to the event's trigger
 * (directly, or through the default triggers), every condition of the trigger whose `when` holds for it,
 * every template it sends, rendered once and sent to every recipient. Pure: the same event and config
 * always give the same deliveries with the same keys.
 */
export function planDeliveries(event: NotificationEvent, config: NotificationConfig): DeliveryPlan {
  const deliveries: Delivery[] = [];
  const problems: NotificationConfigError[] = [];
  const conditions = config.triggers.get(event.trigger);
  const localCluster = event.localCluster ?? DEFAULT_LOCAL_CLUSTER;
  const cluster = event.cluster ?? localCluster;
  const subject =
    event.source !== undefined
      ? { source: event.source, cluster }
      : event.fleet !== undefined
        ? { fleet: event.fleet, cluster }
        : { rollout: event.rollout, cluster };
  const data = { ...event.extra, ...subject, localCluster };
  const rendered = new Map<string, RenderedNotification>();
  // The oncePer identity of the subject: a Rollout's uid, the source's name, the Fleet's namespace/name.
  const subjectId =
    event.source !== undefined
      ? event.source.name
      : event.fleet !== undefined
        ? `${event.fleet.namespace}/${event.fleet.name}`
        : (event.rollout.metadata?.uid ?? '');

  const subscribed = subscriptionsOf(
    event.rollout !== undefined ? event.rollout.metadata?.annotations : event.subscriptions,
  );
  problems.push(...subscribed.problems);
  for (const subscription of subscribed.subscriptions) {
    const defaults = config.defaultTriggersByService.get(subscription.service) ?? config.defaultTriggers;
    const wanted =
      subscription.trigger === undefined
        ? defaults.includes(event.trigger)
        : subscription.trigger === event.trigger;
    if (!wanted) continue;
    if (conditions === undefined) {
      problems.push(
        new NotificationConfigError(
          'notify.config.invalid',
          `trigger.${event.trigger}`,
          `annotation ${subscription.annotation} subscribes to it, and the ConfigMap has no such key`,
        ),
      );
      continue;
    }
    const service = config.services.get(subscription.service);
    if (service === undefined) {
      const unusable = [...config.unusable].find(
        ([key]) => key.split('.').slice(-1)[0] === subscription.service,
      );
      problems.push(
        unusable?.[1] ??
          new NotificationConfigError(
            'notify.config.invalid',
            `service.${subscription.service}`,
            `annotation ${subscription.annotation} names it, and the ConfigMap has no such key`,
          ),
      );
      continue;
    }
    conditions.forEach((condition, index) => {
      const triggerKey = `trigger.${event.trigger}`;
      let once: string | undefined;
      try {
        if (condition.when !== undefined && condition.when.evaluate(subject) !== true) return;
        if (condition.oncePer !== undefined) once = printedKeyPart(condition.oncePer.evaluate(subject));
      } catch (err) {
        problems.push(
          new NotificationConfigError('notify.config.invalid', triggerKey, (err as Error).message),
        );
        return;
      }
      for (const name of condition.send) {
        let notification = rendered.get(name);
        if (notification === undefined) {
          const template = config.templates.get(name);
          if (template === undefined) continue; // parseNotificationConfig refuses a trigger naming a missing template
          try {
            notification = template.render(data);
          } catch (err) {
            problems.push(
              err instanceof NotificationConfigError
                ? err
                : new NotificationConfigError('notify.template.execution', template.key, String(err)),
            );
            continue;
          }
          rendered.set(name, notification);
        }
        const identity =
          once === undefined ? event.key : `${subjectId}|${event.trigger}|${index}|oncePer=${once}`;
        for (const recipient of subscription.recipients)
          deliveries.push({
            key: [identity, service.name, recipient, name].join('|'),
            trigger: event.trigger,
            service: service.name,
            recipient,
            template: name,
            notification,
          });
      }
    });
  }
  // Two annotations (Argo's and Rollgate's, say) naming the same destination send once.
  const unique = new Map(deliveries.map((d) => [d.key, d]));
  return { deliveries: [...unique.values()], problems };
}
