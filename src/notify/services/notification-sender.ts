// The one interface every notification service implements, and how an HTTP answer becomes sent / retry / give up.
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { RenderedNotification } from '../notification-template.ts';
import type { ServiceConfig } from '../service-options.ts';
import type { ServiceCalls } from './service-calls.ts';

/** One message to send: the service as configured (secrets resolved), to whom, and the rendered template. */
export interface SendRequest<S extends ServiceConfig = ServiceConfig> {
  service: S;
  recipient: string;
  notification: RenderedNotification;
  /** `template.<name>`, for errors about the template's service block. */
  templateKey: string;
}

/** `skipped`: the template has nothing for this service (a webhook template block for another webhook). */
export type SendResult = 'sent' | 'skipped';

/** A service: turns a rendered notification into its HTTP (or SMTP) call. */
export type NotificationSender<S extends ServiceConfig = ServiceConfig> = (
  request: SendRequest<S>,
  http: HttpCall,
  calls: ServiceCalls,
) => Promise<SendResult>;

/** What a sender needs to make a request (the worker passes {@link fetchHttpCall}). */
export type HttpCall = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{ status: number; headers: { get(name: string): string | null }; text: string }>;

const TIMEOUT_MS = 10_000;

/** An {@link HttpCall} over the global fetch, with a timeout so a hanging service never holds a worker. */
export const fetchHttpCall: HttpCall = async (url, init) => {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  return { status: response.status, headers: response.headers, text: await response.text() };
};

/** Seconds in Retry-After, as ms; undefined when absent or unreadable. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * Calls a service and classifies its answer: 2xx is sent; 408, 429 and 5xx are transient (retried, at
 * least Retry-After later); any other status needs a human. A network failure or timeout is transient.
 * Errors carry the service key, status and a short piece of the answer, never the URL (a webhook URL
 * is often its own secret) nor any header.
 */
export async function callService(
  service: string,
  http: HttpCall,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; text: string }> {
  let response;
  try {
    response = await http(url, init);
  } catch (err) {
    // fetch's own messages name no URL ("fetch failed", "The operation was aborted due to timeout").
    const reason =
      err instanceof Error ? (err.name === 'TimeoutError' ? 'timed out' : err.message) : String(err);
    throw new NotificationDeliveryError(service, `request failed: ${reason}`, true);
  }
  if (response.status >= 200 && response.status < 300) return response;
  const transient = response.status === 408 || response.status === 429 || response.status >= 500;
  throw new NotificationDeliveryError(
    service,
    `answered HTTP ${response.status}: ${response.text.slice(0, 200)}`,
    transient,
    retryAfterMs(response.headers.get('retry-after')),
  );
}

/** Parses a template field that holds JSON text (Slack attachments, Teams facts); a bad one needs a human. */
export function jsonField(service: string, templateKey: string, field: string, value: unknown): unknown {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch (err) {
    throw new NotificationDeliveryError(
      service,
      `${templateKey}: ${field} is not JSON once rendered (${(err as Error).message})`,
      false,
    );
  }
}

/** A template field that must be a string once rendered; absent or empty is undefined. */
export function stringField(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** A map of strings in a template block (labels, details): every value rendered to a string. */
export function stringMap(
  service: string,
  templateKey: string,
  field: string,
  value: unknown,
): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  const parsed = typeof value === 'string' ? jsonField(service, templateKey, field, value) : value;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new NotificationDeliveryError(service, `${templateKey}: ${field} must be a map of strings`, false);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return out;
}

/** A list of strings in a template block (tags, actions): a YAML list, or JSON text of one. */
export function stringList(
  service: string,
  templateKey: string,
  field: string,
  value: unknown,
): string[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const parsed = typeof value === 'string' ? jsonField(service, templateKey, field, value) : value;
  if (!Array.isArray(parsed))
    throw new NotificationDeliveryError(service, `${templateKey}: ${field} must be a list`, false);
  return parsed.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

/** A template block (`opsgenie:`, `github:`): a map, or nothing. */
export function blockOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
