// The `alertmanager` service: an alert POSTed to every Alertmanager of a cluster (API v2), resolved by endsAt.
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig } from '../service-options.ts';
import {
  blockOf,
  callService,
  stringField,
  stringMap,
  type NotificationSender,
} from './notification-sender.ts';

type AlertmanagerService = Extract<ServiceConfig, { type: 'alertmanager' }>;

/** Alertmanager's label names (Prometheus' data model): a label with another name is refused by the API. */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * POSTs `[{labels, annotations, generatorURL, startsAt, endsAt?}]` to `<scheme>://<target><apiPath>` of
 * every target (an HA cluster deduplicates among itself): sent when one took it; when none did, the
 * failure is transient if any target's was. `alertname` defaults to the template's name, as
 * notifications-engine does. `alertmanager.resolved: true` (a Rollgate addition) sends the same labels
 * with `endsAt` now, which resolves the alert an earlier notification fired: Alertmanager identifies an
 * alert by its labels.
 */
export const sendAlertmanager: NotificationSender<AlertmanagerService> = async (request, http, calls) => {
  const { service, notification, templateKey } = request;
  const block = blockOf(notification.alertmanager);
  const labels = stringMap(service.key, templateKey, 'alertmanager.labels', block.labels) ?? {};
  const annotations =
    stringMap(service.key, templateKey, 'alertmanager.annotations', block.annotations) ?? {};
  labels.alertname ??= templateKey.replace(/^template\./, '');
  for (const name of Object.keys(labels))
    if (!LABEL_NAME.test(name))
      throw new NotificationDeliveryError(
        service.key,
        `${templateKey}: alertmanager.labels: "${name}" is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)`,
        false,
      );
  if (annotations.message === undefined && notification.message) annotations.message = notification.message;
  const now = calls.now().toISOString();
  const resolved = block.resolved === true || stringField(block.resolved) === 'true';
  const generatorURL = stringField(block.generatorURL);
  const alert = {
    labels,
    annotations,
    ...(generatorURL !== undefined && { generatorURL }),
    startsAt: now,
    ...(resolved && { endsAt: now }),
  };
  const { scheme, apiPath, basicAuth, bearerToken, targets } = service.options;
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (basicAuth !== undefined)
    headers.Authorization = `Basic ${Buffer.from(`${basicAuth.username}:${basicAuth.password}`).toString('base64')}`;
  else if (bearerToken !== undefined) headers.Authorization = `Bearer ${bearerToken}`;
  const body = JSON.stringify([alert]);
  const results = await Promise.allSettled(
    targets.map((target) =>
      callService(service.key, http, `${scheme}://${target}${apiPath}`, { method: 'POST', headers, body }),
    ),
  );
  if (results.some((r) => r.status === 'fulfilled')) return 'sent';
  const failures = results.map((r) => (r as PromiseRejectedResult).reason as unknown);
  const typed = failures.filter(
    (f): f is NotificationDeliveryError => f instanceof NotificationDeliveryError,
  );
  if (typed.length !== failures.length) throw failures.find((f) => !(f instanceof NotificationDeliveryError));
  const prefix = `${service.key}: `;
  throw new NotificationDeliveryError(
    service.key,
    `no Alertmanager took the alert (${typed.map((f) => f.message.replace(prefix, '')).join('; ')})`,
    typed.some((f) => f.transient),
    typed.map((f) => f.retryAfterMs).find((ms) => ms !== undefined),
  );
};
