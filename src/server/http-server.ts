// The one HTTP server of a Rollgate process: webhooks, /healthz, /readyz and /metrics (node:http).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { silentLogger, type Logger } from '../log/logger.ts';
import { bullPrefix } from '../queue/queue-names.ts';
import type { Dashboard } from './dashboard/dashboard.ts';
import { redisDeliveryLedger } from './delivery-ledger.ts';
import { DEFAULT_WEBHOOK_BODY_LIMITS, WebhookBodyGate, type WebhookBodyLimits } from './webhook-body.ts';
import { refuseMalformedUrls } from './webhook-providers/payload-fields.ts';
import type { ReadinessReport } from './dependency-health.ts';
import { metrics as processMetrics, type RollgateMetrics } from './metrics.ts';
import { azureDevOpsProvider } from './webhook-providers/azure-devops.ts';
import { bitbucketProvider } from './webhook-providers/bitbucket.ts';
import { genericProvider } from './webhook-providers/generic.ts';
import { giteaProvider } from './webhook-providers/gitea.ts';
import { githubProvider } from './webhook-providers/github.ts';
import { gitlabProvider } from './webhook-providers/gitlab.ts';
import type {
  OnPush,
  SourceWebhookLookup,
  WebhookProvider,
  WebhookProviderName,
  WebhooksConfig,
} from './webhook-types.ts';

/**
 * Connections the server holds at once (each costs a socket, not memory: bodies are limited by the
 * webhook body gate); past it Node closes new connections at once.
 */
const MAX_CONNECTIONS = 1024;

/**
 * A named readiness condition: false, a throw or a failing report means "not ready"; a failing report
 * with `blocksReadiness: false` is shown (`degraded: …`) without making the process unready.
 */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<ReadinessResult> | ReadinessResult;
}

export type ReadinessResult = boolean | void | ReadinessReport;

export interface HttpServerOptions {
  /** Port to listen on; 0 picks a free one (see the returned url). */
  port: number;
  /** Interface to bind (default 0.0.0.0). */
  host?: string;
  /** Per-provider secrets; a provider without one refuses every delivery. */
  webhooks?: WebhooksConfig;
  /** GitSource receivers (`/webhooks/PROVIDER/NAMESPACE/NAME`), each verified with its own secret. */
  sourceWebhooks?: SourceWebhookLookup;
  /** Redis for delivery-id deduplication and the readiness ping. */
  redis: Redis;
  /** Queue key prefix (without braces); delivery ids are kept under it. */
  prefix?: string;
  /** Receives each verified push (one call per branch); it should only enqueue. */
  onPush: OnPush;
  /** Extra readiness checks besides the Redis ping. */
  readiness?: readonly ReadinessCheck[];
  logger?: Logger;
  /** Metrics to record into and expose (default: the process-wide `metrics`). */
  metrics?: RollgateMetrics;
  /** The dashboard's API and page (/api/v1/…, /ui/), when enabled. */
  dashboard?: Dashboard;
  /** Limits on webhook bodies received before they are authenticated (default DEFAULT_WEBHOOK_BODY_LIMITS). */
  webhookBodyLimits?: Partial<WebhookBodyLimits>;
}

export interface RunningHttpServer {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections, lets requests in flight finish (up to 5 s), then closes. */
  stop(): Promise<void>;
}

const PROVIDERS: Record<WebhookProviderName, WebhookProvider> = {
  github: githubProvider,
  gitlab: gitlabProvider,
  gitea: giteaProvider,
  bitbucket: bitbucketProvider,
  'azure-devops': azureDevOpsProvider,
  generic: genericProvider,
};

/** Webhook delivery outcomes, as counted in rollgate_webhook_deliveries_total. */
export type DeliveryOutcome =
  | 'accepted'
  | 'ignored'
  | 'duplicate'
  | 'unauthorized'
  | 'not_configured'
  | 'too_large'
  | 'busy'
  | 'bad_request'
  | 'error';

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** Lets a refused upload finish (so the client reads our 413), but cuts it off past 8× the limit. */
function drain(req: IncomingMessage, limit: number): void {
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > limit * 8) req.destroy();
  });
  req.resume();
}

function parseBody(
  raw: Buffer,
  contentType: string | undefined,
): { ok: true; value: unknown } | { ok: false } {
  try {
    let text = raw.toString('utf8');
    // GitHub and Gitea can send `application/x-www-form-urlencoded` with the JSON in `payload`.
    if (contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
      text = new URLSearchParams(text).get('payload') ?? '';
    }
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Starts the HTTP server:
 * - `POST /webhooks/{github,gitlab,gitea,bitbucket,azure-devops,generic}`: authenticate (403 when the provider has
 *   no secret configured, 401 on a bad or missing signature), 413 over the body limit, 503 with
 *   Retry-After while too many bodies are being received (see WebhookBodyGate), 400 on bad JSON or a
 *   malformed repository URL, 200 for an already-seen delivery id or signed body (a replay), else 202 once `onPush` has enqueued the polls
 *   (503 when it fails, and the delivery id is forgotten so a redelivery works).
 * - `GET /healthz`: 200 while the process serves requests.
 * - `GET /readyz`: 200 when Redis answers PING and no readiness check fails (a `degraded` one is shown
 *   but does not count), else 503; the body names each check's state (`ok`, `degraded`, `failed`) and
 *   nothing more: what a check found is logged when it changes.
 * - `GET /metrics`: Prometheus text format from the metrics registry.
 * - `/api/v1/…` and `/ui/`: the dashboard (docs/dashboard.md), when one is given.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const logger = (options.logger ?? silentLogger).child({ component: 'http' });
  const metrics = options.metrics ?? processMetrics;
  const webhooks = options.webhooks ?? {};
  const ledger = redisDeliveryLedger(options.redis, bullPrefix(options.prefix));
  const bodies = new WebhookBodyGate({
    ...DEFAULT_WEBHOOK_BODY_LIMITS,
    ...(options.webhookBodyLimits ?? {}),
  });
  const bodyLimit = bodies.limits.maxBodyBytes;
  // Down from a lost connection's first reconnect until it is ready again (ioredis's status alone passes
  // through `connecting` at every attempt, which would look up for a black-holed host's whole timeout).
  let redisDown = ['reconnecting', 'close', 'end'].includes(options.redis.status);
  const onRedisDown = (): void => {
    redisDown = true;
  };
  const onRedisReady = (): void => {
    redisDown = false;
  };
  options.redis.on('reconnecting', onRedisDown);
  options.redis.on('end', onRedisDown);
  options.redis.on('ready', onRedisReady);

  /**
   * A delivery to a provider's receiver: the configuration's (`receiver` absent: verified with
   * `webhooks.<provider>`, polls every source on the repository and branch) or a GitSource's own (verified
   * with its Secret's value, polls that source only, remembered apart so the same push delivered to both
   * receivers is not taken for a replay).
   */
  const handleWebhook = async (
    provider: WebhookProvider,
    req: IncomingMessage,
    res: ServerResponse,
    receiver?: { id: string; config: WebhooksConfig; only: string },
  ): Promise<void> => {
    const secrets = receiver?.config ?? webhooks;
    const ledgerKey = receiver?.id ?? provider.name;
    const deliveryId = provider.deliveryId(req.headers);
    const event = provider.eventName(req.headers);
    const answer = (
      outcome: DeliveryOutcome,
      status: number,
      body: Record<string, unknown>,
      headers = {},
    ): void => {
      metrics.webhookDeliveriesTotal.inc({ provider: provider.name, outcome });
      const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      logger[level](
        { provider: provider.name, deliveryId, event, outcome, status, reason: body.reason },
        'webhook delivery',
      );
      sendJson(res, status, { provider: provider.name, deliveryId: deliveryId ?? null, ...body }, headers);
    };

    if (!provider.isConfigured(secrets)) {
      req.resume();
      answer('not_configured', 403, {
        status: 'refused',
        reason: `webhook provider ${provider.name} has no secret configured; every delivery is refused (set webhooks.${provider.name}.secret)`,
      });
      return;
    }
    const read = await bodies.read(req, provider.signingSecret(secrets));
    if (!read.ok) {
      if (read.refusal === 'gone') {
        res.destroy();
        return;
      }
      drain(req, bodyLimit);
      if (read.refusal === 'too-large')
        answer(
          'too_large',
          413,
          { status: 'refused', reason: `body larger than ${bodyLimit} bytes` },
          { connection: 'close' },
        );
      else
        answer(
          'busy',
          503,
          {
            status: 'refused',
            reason: 'too many webhook bodies are being received at once; redeliver later',
          },
          { connection: 'close', 'retry-after': '5' },
        );
      return;
    }
    const { body, sha256Hex } = read.value;
    const verification = provider.verify(req.headers, body, secrets);
    if (!verification.ok) {
      answer('unauthorized', 401, { status: 'refused', reason: verification.reason });
      return;
    }
    const parsed = parseBody(body.raw, req.headers['content-type']);
    if (!parsed.ok) {
      answer('bad_request', 400, { status: 'refused', reason: 'body is not valid JSON' });
      return;
    }
    const meaning = refuseMalformedUrls(provider.interpret(req.headers, parsed.value));
    if (meaning.kind === 'invalid') {
      answer('bad_request', 400, { status: 'refused', reason: meaning.reason });
      return;
    }
    // Redis unreachable: every command would wait for the reconnect, and the forge would time the delivery
    // out (GitHub after 10 s) without knowing why. Answer at once; the forge's redelivery, or the next
    // scheduled poll, picks the push up.
    if (redisDown) {
      answer('error', 503, {
        status: 'error',
        reason: 'the queue (Redis) is unreachable; redeliver later',
      });
      return;
    }
    if (deliveryId !== undefined && !(await ledger.firstSeen(ledgerKey, deliveryId))) {
      answer('duplicate', 200, { status: 'duplicate', reason: 'delivery already received; ignored' });
      return;
    }
    // The same signed body under a new delivery id is a replay (the id is not signed): one poll per window.
    const replayChecked = provider.uniqueBodies;
    if (replayChecked && !(await ledger.firstSeenBody(ledgerKey, sha256Hex))) {
      answer('duplicate', 200, {
        status: 'duplicate',
        reason: 'the same signed body was received moments ago (a replay or a redelivery); ignored',
      });
      return;
    }
    if (meaning.kind === 'ignored') {
      answer('ignored', 202, { status: 'ignored', reason: meaning.reason });
      return;
    }
    try {
      const sourcesQueued: string[] = [];
      for (const branch of meaning.branches) {
        const handled = await options.onPush({
          provider: provider.name,
          deliveryId,
          repositoryUrls: meaning.repositoryUrls,
          branch,
          cause: meaning.cause,
          ...(receiver ? { only: receiver.only } : {}),
        });
        sourcesQueued.push(...handled.sourcesQueued);
      }
      answer('accepted', 202, {
        status: 'accepted',
        branches: meaning.branches,
        sourcesQueued,
        reason: sourcesQueued.length > 0 ? 'polls enqueued' : 'no source tracks this repository and branch',
      });
    } catch (error) {
      if (deliveryId !== undefined) await ledger.forget(ledgerKey, deliveryId).catch(() => undefined);
      if (replayChecked) await ledger.forgetBody(ledgerKey, sha256Hex).catch(() => undefined);
      logger.error({ provider: provider.name, deliveryId, err: error }, 'webhook: could not enqueue polls');
      answer('error', 503, { status: 'error', reason: 'could not enqueue the poll; redeliver later' });
    }
  };

  // What each check last reported, so its detail is logged when it changes rather than at every probe.
  const lastReported = new Map<string, string>();
  /**
   * Records a check's state for the answer, which says only `ok`, `degraded` or `failed`: its detail (an
   * error message, a host name, a step) is for operators, so it goes to the log, never to the caller.
   */
  const report = (
    results: Record<string, string>,
    name: string,
    state: 'ok' | 'degraded' | 'failed',
    detail?: string,
  ): void => {
    results[name] = state;
    const said = state === 'ok' ? 'ok' : `${state}: ${detail ?? ''}`;
    const before = lastReported.get(name);
    if (before === said || (before === undefined && state === 'ok')) return;
    lastReported.set(name, said);
    if (state === 'ok') logger.info({ check: name, state }, `readiness: ${name} ok`);
    else logger.warn({ check: name, state, detail }, `readiness: ${name} ${said}`);
  };

  const handleReady = async (res: ServerResponse): Promise<void> => {
    const results: Record<string, string> = {};
    const timeout = <T>(p: Promise<T>): Promise<T> =>
      Promise.race([
        p,
        new Promise<T>((_, reject) =>
          setTimeout(() => reject(new Error('timed out after 2 s')), 2_000).unref(),
        ),
      ]);
    let ready = true;
    try {
      await timeout(options.redis.ping());
      report(results, 'redis', 'ok');
    } catch (error) {
      report(results, 'redis', 'failed', error instanceof Error ? error.message : String(error));
      ready = false;
    }
    for (const check of options.readiness ?? []) {
      try {
        const result = await timeout(Promise.resolve(check.check()));
        const outcome: ReadinessReport =
          typeof result === 'object' ? result : { ok: result !== false, detail: 'not ready' };
        if (outcome.ok) report(results, check.name, 'ok');
        else if (outcome.blocksReadiness === false) report(results, check.name, 'degraded', outcome.detail);
        else {
          report(results, check.name, 'failed', outcome.detail ?? 'not ready');
          ready = false;
        }
      } catch (error) {
        report(results, check.name, 'failed', error instanceof Error ? error.message : String(error));
        ready = false;
      }
    }
    sendJson(res, ready ? 200 : 503, { ready, checks: results });
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    // `/webhooks/PROVIDER` (the configuration's receiver) or `/webhooks/PROVIDER/NAMESPACE/NAME` (a GitSource's);
    // a provider name may have hyphens (`azure-devops`).
    const webhook = /^\/webhooks\/([a-z]+(?:-[a-z]+)*)(?:\/([a-z0-9-]{1,63})\/([a-z0-9.-]{1,253}))?\/?$/.exec(
      path,
    );
    if (webhook) {
      const provider = PROVIDERS[webhook[1] as WebhookProviderName] as WebhookProvider | undefined;
      if (provider === undefined || !Object.hasOwn(PROVIDERS, webhook[1] ?? '')) {
        sendJson(res, 404, {
          error: `unknown webhook provider ${webhook[1]}; use one of ${Object.keys(PROVIDERS).join(', ')}`,
        });
        return;
      }
      if (req.method !== 'POST') {
        sendJson(res, 405, { error: 'webhooks accept POST only' }, { allow: 'POST' });
        return;
      }
      const [, , namespace, name] = webhook;
      if (namespace === undefined || name === undefined) {
        await handleWebhook(provider, req, res);
        return;
      }
      const receiver = options.sourceWebhooks?.(namespace, name);
      if (receiver === undefined) {
        req.resume();
        // The same answer for a GitSource that is not there and one without spec.webhook: a caller who may
        // not read GitSources learns no more from it.
        sendJson(res, 404, {
          error: `no webhook receiver for GitSource ${namespace}/${name} (it needs spec.webhook.secretRef and must be Ready)`,
        });
        return;
      }
      await handleWebhook(provider, req, res, {
        id: `${provider.name}/${namespace}/${name}`,
        config: { [provider.name]: { secret: receiver.secret } },
        only: receiver.source,
      });
      return;
    }
    if (options.dashboard !== undefined && (await options.dashboard.handle(req, res, path))) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(res, 405, { error: `${req.method ?? ''} not allowed on ${path}` }, { allow: 'GET' });
      return;
    }
    if (path === '/healthz') return sendJson(res, 200, { alive: true });
    if (path === '/readyz') return handleReady(res);
    if (path === '/metrics') {
      const text = await metrics.registry.metrics();
      res.writeHead(200, { 'content-type': metrics.registry.contentType });
      res.end(text);
      return;
    }
    sendJson(res, 404, { error: `no route ${path}` });
  };

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      logger.error({ err: error, path: req.url }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  // Slow-loris guard: a client gets 30 s to send its headers and body.
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;
  server.maxConnections = MAX_CONNECTIONS;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url }, 'HTTP server listening');

  return {
    url,
    port: address.port,
    stop: async () => {
      options.redis.off('reconnecting', onRedisDown);
      options.redis.off('end', onRedisDown);
      options.redis.off('ready', onRedisReady);
      // Event streams never end on their own: close them, or the server would wait out the 5 s below.
      options.dashboard?.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), 5_000);
      force.unref();
      await closed;
      clearTimeout(force);
    },
  };
}
