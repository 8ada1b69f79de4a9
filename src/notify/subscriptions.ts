// Who wants which notification: the subscribe annotations of a Rollout, as Argo users write them.

/** Argo's annotation prefix, kept as it is, and Rollgate's own (same grammar). */
export const SUBSCRIBE_PREFIXES = [
  'notifications.argoproj.io/subscribe.',
  'notifications.rollgate.dev/subscribe.',
];

/**
 * One annotation: `subscribe.<trigger>.<service>: a;b` names a trigger; `subscribe.<service>: a;b`
 * (`trigger` absent) subscribes to the default triggers of the ConfigMap.
 */
export interface Subscription {
  trigger?: string;
  service: string;
  /** The annotation's value split on `;`, trimmed; `['']` when empty (a webhook needs no recipient). */
  recipients: string[];
  annotation: string;
}

/** The subscriptions of a Rollout's annotations; other annotations are ignored. */
export function subscriptionsOf(annotations: Readonly<Record<string, string>> | undefined): Subscription[] {
  const subscriptions: Subscription[] = [];
  for (const [annotation, value] of Object.entries(annotations ?? {})) {
    const prefix = SUBSCRIBE_PREFIXES.find((p) => annotation.startsWith(p));
    if (prefix === undefined) continue;
    const rest = annotation.slice(prefix.length);
    if (rest === '') continue;
    // Trigger names hold no dot (on-rollout-completed); what follows the first dot is the service.
    const dot = rest.indexOf('.');
    const recipients = value
      .split(';')
      .map((r) => r.trim())
      .filter((r) => r !== '');
    subscriptions.push({
      ...(dot === -1 ? {} : { trigger: rest.slice(0, dot) }),
      service: dot === -1 ? rest : rest.slice(dot + 1),
      recipients: recipients.length > 0 ? recipients : [''],
      annotation,
    });
  }
  return subscriptions;
}

/** True when a Rollout has any subscription: only those are worth a notification job. */
export function hasSubscriptions(annotations: Readonly<Record<string, string>> | undefined): boolean {
  return Object.keys(annotations ?? {}).some((a) => SUBSCRIBE_PREFIXES.some((p) => a.startsWith(p)));
}
