// The error for a notification ConfigMap or Secret Rollgate cannot use: it names the key to fix.

/** Why the configuration was refused; compare `code`, since errors cross process boundaries. */
export type NotificationConfigErrorCode =
  | 'notify.config.invalid'
  | 'notify.config.secret-missing'
  | 'notify.template.syntax'
  | 'notify.template.unsupported'
  | 'notify.template.execution';

/**
 * A key of `rollgate-notification-configmap` (or the Secret it references) that does not parse, names
 * something missing, or uses template language Rollgate does not support. `key` is the ConfigMap key
 * (`service.slack`, `template.rollout-completed`, `trigger.on-rollout-completed`, `defaultTriggers`).
 */
export class NotificationConfigError extends Error {
  override readonly name = 'NotificationConfigError';

  constructor(
    readonly code: NotificationConfigErrorCode,
    readonly key: string,
    reason: string,
  ) {
    super(`${key}: ${reason}`);
  }
}
