// Who wants which notification: the subscribe annotations of a Rollout, as Argo users write them.
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { NotificationConfigError } from './notification-config-error.ts';

/** Argo's annotation prefix, kept as it is, and Rollgate's own (same grammar). */
export const SUBSCRIBE_PREFIXES = [
  'notifications.argoproj.io/subscribe.',
  'notifications.rollgate.dev/subscribe.',
];

/** notifications-engine's list form: several triggers and destinations in one YAML annotation. */
export const SUBSCRIPTIONS_ANNOTATIONS = [
  'notifications.argoproj.io/subscriptions',
  'notifications.rollgate.dev/subscriptions',
];

const subscriptionListSchema = z.array(
  z.looseObject({
    trigger: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
    destinations: z.array(
      z.looseObject({
        service: z.string().min(1),
        recipients: z.union([z.string(), z.array(z.string())]).optional(),
      }),
    ),
  }),
);

/**
 * One subscription: `subscribe.<trigger>.<service>: a;b` names a trigger; `subscribe.<service>: a;b`
 * (`trigger` absent) subscribes to the default triggers of the ConfigMap. A `subscriptions` annotation
 * gives one per trigger and destination.
 */
export interface Subscription {
  trigger?: string;
  service: string;
  /** The annotation's value split on `;`, trimmed; `['']` when empty (a webhook needs no recipient). */
  recipients: string[];
  annotation: string;
}

function recipientsOf(values: string[]): string[] {
  const recipients = values
    .flatMap((v) => v.split(';'))
    .map((r) => r.trim())
    .filter((r) => r !== '');
  return recipients.length > 0 ? recipients : [''];
}

/** The subscriptions of one `…/subscriptions` annotation (a YAML list of `{trigger, destinations}`). */
function listedSubscriptions(annotation: string, value: string): Subscription[] {
  let parsed: unknown;
  try {
    parsed = parseYaml(value);
  } catch (err) {
    throw new NotificationConfigError(
      'notify.config.invalid',
      annotation,
      `not YAML: ${(err as Error).message}`,
    );
  }
  const list = subscriptionListSchema.safeParse(parsed);
  if (!list.success)
    throw new NotificationConfigError(
      'notify.config.invalid',
      annotation,
      `must be a list of {trigger, destinations: [{service, recipients}]}: ${z.prettifyError(list.error)}`,
    );
  return list.data.flatMap((entry) => {
    const triggers = entry.trigger === undefined ? [undefined] : [entry.trigger].flat();
    return triggers.flatMap((trigger) =>
      entry.destinations.map((destination) => ({
        ...(trigger !== undefined && { trigger }),
        service: destination.service,
        recipients: recipientsOf([destination.recipients ?? []].flat()),
        annotation,
      })),
    );
  });
}

/**
 * The subscriptions of a Rollout's annotations; other annotations are ignored. An annotation that cannot
 * be read is a problem naming it; the others still count.
 */
export function subscriptionsOf(annotations: Readonly<Record<string, string>> | undefined): {
  subscriptions: Subscription[];
  problems: NotificationConfigError[];
} {
  const subscriptions: Subscription[] = [];
  const problems: NotificationConfigError[] = [];
  for (const [annotation, value] of Object.entries(annotations ?? {})) {
    if (SUBSCRIPTIONS_ANNOTATIONS.includes(annotation)) {
      try {
        subscriptions.push(...listedSubscriptions(annotation, value));
      } catch (err) {
        if (!(err instanceof NotificationConfigError)) throw err;
        problems.push(err);
      }
      continue;
    }
    const prefix = SUBSCRIBE_PREFIXES.find((p) => annotation.startsWith(p));
    if (prefix === undefined) continue;
    const rest = annotation.slice(prefix.length);
    if (rest === '') continue;
    // Trigger names hold no dot (on-rollout-completed); what follows the first dot is the service.
    const dot = rest.indexOf('.');
    subscriptions.push({
      ...(dot === -1 ? {} : { trigger: rest.slice(0, dot) }),
      service: dot === -1 ? rest : rest.slice(dot + 1),
      recipients: recipientsOf([value]),
      annotation,
    });
  }
  return { subscriptions, problems };
}

/** True when a Rollout has any subscription: only those are worth a notification job. */
export function hasSubscriptions(annotations: Readonly<Record<string, string>> | undefined): boolean {
  return Object.keys(annotations ?? {}).some(
    (a) => SUBSCRIPTIONS_ANNOTATIONS.includes(a) || SUBSCRIBE_PREFIXES.some((p) => a.startsWith(p)),
  );
}

/**
 * The subscribe entries of an object's annotations (a GitSource object's): the annotations this module
 * reads, the others left out. What a source's subscriptions are given as (`sources[].notifications` of
 * the configuration is the same map, written by hand).
 */
export function subscribeEntriesOf(
  annotations: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(annotations ?? {}).filter(
      ([a]) => SUBSCRIPTIONS_ANNOTATIONS.includes(a) || SUBSCRIBE_PREFIXES.some((p) => a.startsWith(p)),
    ),
  );
}
