// The one logger factory: JSON lines in production, pretty output on a TTY, secrets redacted.
import pino, { type Logger, type LoggerOptions } from 'pino';
import { normaliseLogLevel } from './log-level.ts';

export type { Logger } from 'pino';

/** Field paths whose values never reach a log line, at any depth we log objects. */
export const REDACTED_PATHS = [
  'password',
  'token',
  'secret',
  'secretValue',
  'authorization',
  'auth',
  'headers.authorization',
  'headers.Authorization',
  'headers["x-gitlab-token"]',
  'headers["x-hub-signature-256"]',
  '*.password',
  '*.token',
  '*.secret',
  '*.authorization',
  '*.auth',
  '*.*.password',
  '*.*.token',
  '*.*.secret',
  'req.headers.authorization',
  'req.headers["x-gitlab-token"]',
  'config.webhooks.*.secret',
  // Notification services: Slack and Teams webhook URLs are credentials themselves.
  'webhookURL',
  'recipientUrls',
  '*.webhookURL',
  '*.recipientUrls',
  '*.*.webhookURL',
  '*.*.recipientUrls',
  // The other services' credentials: keys by recipient, chat webhook URLs, an App key, a bearer token.
  ...['apiKeys', 'serviceKeys', 'webhooks', 'privateKey', 'bearerToken', 'basicAuth'].flatMap((field) => [
    `options.${field}`,
    `*.options.${field}`,
    `*.*.options.${field}`,
  ]),
  'config.sources[*].auth',
];

export interface LoggerSettings {
  level?: string;
  /** `json` always emits JSON lines; `pretty` always pretty-prints; `auto` pretty-prints on a TTY. */
  format?: 'json' | 'pretty' | 'auto';
  name?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to read what was logged. */
  destination?: NodeJS.WritableStream;
  /**
   * Write each JSON line to stdout before the call returns (default false: buffered, written
   * asynchronously). A process that ends with `process.exit` needs it: a line still being written
   * then is lost, or lands after lines queued behind it.
   */
  sync?: boolean;
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const format = settings.format ?? 'auto';
  const pretty =
    format === 'pretty' || (format === 'auto' && settings.destination === undefined && process.stdout.isTTY);
  const options: LoggerOptions = {
    level: normaliseLogLevel(settings.level ?? process.env.ROLLGATE_LOG_LEVEL ?? 'info'),
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: settings.name ? { name: settings.name } : {},
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (pretty) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } },
    });
  }
  if (settings.destination) return pino(options, settings.destination);
  return settings.sync ? pino(options, pino.destination({ dest: 1, sync: true })) : pino(options);
}

/** A logger that drops everything: for library code called without one, and for quiet tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
