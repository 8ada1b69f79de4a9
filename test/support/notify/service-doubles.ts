// Test support: local HTTP doubles of Slack (chat.postMessage, incoming webhooks), Teams (connector, workflow) and a plain webhook, answering as their documentation says.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a double took. */
export interface TakenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json?: unknown;
}

/** A canned answer for the next request to a path, to play a failing service. */
export interface CannedAnswer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export interface ServiceDoubles {
  url: string;
  /** chat.postMessage calls that Slack accepted (valid token, known channel). */
  slackMessages: TakenRequest[];
  /** Every request, accepted or not, in order. */
  requests: TakenRequest[];
  /** Requests to `/webhook…` paths (a plain webhook service). */
  webhookCalls: TakenRequest[];
  /** Requests to the Teams URLs. */
  teamsCalls: TakenRequest[];
  /** Answers the next request to `path` with `answer` instead of the documented success. */
  failNext(path: string, answer: CannedAnswer): void;
  stop(): Promise<void>;
}

export const SLACK_TOKEN = 'xoxb-test-0123456789';
export const SLACK_CHANNELS = ['deploys', 'releases', 'team-a'];
/** The path of an incoming webhook; its last part is the secret. */
export const SLACK_WEBHOOK_PATH = '/services/T0001/B0001/s3cr3tHookPart';
export const TEAMS_CONNECTOR_PATH = '/teams/connector/s3cr3t-connector';
export const TEAMS_WORKFLOW_PATH = '/teams/workflow/s3cr3t-workflow';

function json(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  response.end(JSON.stringify(value));
}

function text(
  response: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'Content-Type': 'text/plain', ...headers });
  response.end(body);
}

/**
 * Starts the doubles on a loopback port. Slack's chat.postMessage (`POST /api/chat.postMessage`) wants
 * `Authorization: Bearer <token>` and a JSON body with `channel` and `text` (or attachments/blocks), and
 * answers HTTP 200 with `{ok: true, channel, ts}` or `{ok: false, error}` (`not_authed`, `invalid_auth`,
 * `channel_not_found`, `no_text`). An incoming webhook answers `ok`, or 400 `invalid_payload` / `no_text`.
 * A Teams connector answers 200 `1`; a workflow answers 202 with no body. Anything else is 404.
 */
export async function startServiceDoubles(): Promise<ServiceDoubles> {
  const requests: TakenRequest[] = [];
  const slackMessages: TakenRequest[] = [];
  const canned = new Map<string, CannedAnswer[]>();

  const handle = (request: IncomingMessage, response: ServerResponse, taken: TakenRequest): void => {
    const failure = canned.get(taken.path)?.shift();
    if (failure) return text(response, failure.status, failure.body, failure.headers);
    if (taken.path === '/api/chat.postMessage') {
      if (request.method !== 'POST') return json(response, 405, { ok: false, error: 'method_not_supported' });
      const auth = taken.headers.authorization;
      if (auth === undefined) return json(response, 200, { ok: false, error: 'not_authed' });
      if (auth !== `Bearer ${SLACK_TOKEN}`) return json(response, 200, { ok: false, error: 'invalid_auth' });
      if (!String(taken.headers['content-type']).startsWith('application/json'))
        return json(response, 200, { ok: false, error: 'invalid_arguments' });
      const body = (taken.json ?? {}) as {
        channel?: unknown;
        text?: unknown;
        attachments?: unknown;
        blocks?: unknown;
      };
      if (typeof body.channel !== 'string' || !SLACK_CHANNELS.includes(body.channel))
        return json(response, 200, { ok: false, error: 'channel_not_found' });
      if (!body.text && !body.attachments && !body.blocks)
        return json(response, 200, { ok: false, error: 'no_text' });
      slackMessages.push(taken);
      return json(response, 200, {
        ok: true,
        channel: body.channel,
        ts: `${Date.now() / 1000}`,
        message: { text: body.text },
      });
    }
    if (taken.path === SLACK_WEBHOOK_PATH) {
      if (taken.json === undefined) return text(response, 400, 'invalid_payload');
      const body = taken.json as { text?: unknown; attachments?: unknown; blocks?: unknown };
      if (!body.text && !body.attachments && !body.blocks) return text(response, 400, 'no_text');
      slackMessages.push(taken);
      return text(response, 200, 'ok');
    }
    if (taken.path === TEAMS_CONNECTOR_PATH) return text(response, 200, '1');
    if (taken.path === TEAMS_WORKFLOW_PATH) {
      response.writeHead(202);
      return void response.end();
    }
    if (taken.path.startsWith('/webhook')) return text(response, 200, '');
    return text(response, 404, 'no_service');
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = body === '' ? undefined : (JSON.parse(body) as unknown);
      } catch {
        parsed = undefined;
      }
      const taken: TakenRequest = {
        method: request.method ?? '',
        path: (request.url ?? '').split('?')[0]!,
        headers: request.headers,
        body,
        ...(parsed !== undefined && { json: parsed }),
      };
      requests.push(taken);
      handle(request, response, taken);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    slackMessages,
    get webhookCalls() {
      return requests.filter((r) => r.path.startsWith('/webhook'));
    },
    get teamsCalls() {
      return requests.filter((r) => r.path.startsWith('/teams/'));
    },
    failNext(path, answer) {
      canned.set(path, [...(canned.get(path) ?? []), answer]);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
