// Test support: local doubles of Opsgenie, PagerDuty Events v2, Mattermost and Google Chat webhooks that check each request against the published shape.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  GOOGLE_CHAT_MESSAGE,
  GOOGLE_CHAT_REPLY_OPTIONS,
  MATTERMOST_CREATE_POST,
  OPSGENIE_CREATE_ALERT,
  PAGERDUTY_EVENT,
  shapeProblems,
} from './published-shapes.ts';

/** One request a double took, with what it read from it. */
export interface SaasRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  json: unknown;
}

/** A canned answer for the next request to a path (an outage, a rate limit). */
export interface SaasFault {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export interface SaasDoubles {
  url: string;
  /** Requests each service accepted, by service. */
  accepted: {
    opsgenie: SaasRequest[];
    pagerduty: SaasRequest[];
    mattermost: SaasRequest[];
    googlechat: SaasRequest[];
  };
  /** Requests that broke the published shape (each answered 400 or 422): tests expect none. */
  violations: string[];
  /** PagerDuty incidents by dedup key: `triggered` until a resolve event for the key arrives. */
  incidents: Map<string, 'triggered' | 'acknowledged' | 'resolved'>;
  failNext(path: string, fault: SaasFault): void;
  stop(): Promise<void>;
}

export const OPSGENIE_KEYS = { web: 'og-key-web-0123456789' };
/** Events API v2 integration keys are 32 characters. */
export const PAGERDUTY_ROUTING_KEYS = { shop: 'R0123456789abcdef0123456789abcdf' };
export const MATTERMOST_TOKEN = 'mm-bot-token-0123456789';
export const MATTERMOST_CHANNELS = ['c4nn3l1d0000000000000000aa'];
/** A Google Chat webhook path; its query's `key` and `token` are the secret. */
export const GOOGLE_CHAT_SPACE = '/v1/spaces/AAAA1234/messages';
export const GOOGLE_CHAT_QUERY = 'key=AIzaSy-test-key&token=s3cr3t-chat-token';

function answer(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  response.end(value === undefined ? '' : JSON.stringify(value));
}

/**
 * Starts the doubles on one loopback port. Opsgenie: `POST /v2/alerts` with `Authorization: GenieKey
 * <key>` (422 for a body off CreateAlertPayload, 401 for an unknown key, 202 otherwise). PagerDuty:
 * `POST /v2/enqueue` (400 `invalid event` off the schema or with an unknown routing key — PagerDuty
 * answers 400 for both —, 202 otherwise; a trigger opens the dedup key's incident, a resolve closes it).
 * Mattermost: `POST /api/v4/posts` with a bearer token (401, 400 off CreatePost, 403 for a channel the
 * bot is not in, 201 with the post). Google Chat: `POST /v1/spaces/<space>/messages?key&token` (400
 * INVALID_ARGUMENT off the Message shape, 401 for a wrong token, 200 with the message).
 */
export async function startSaasDoubles(): Promise<SaasDoubles> {
  const accepted: SaasDoubles['accepted'] = { opsgenie: [], pagerduty: [], mattermost: [], googlechat: [] };
  const violations: string[] = [];
  const incidents = new Map<string, 'triggered' | 'acknowledged' | 'resolved'>();
  const faults = new Map<string, SaasFault[]>();
  let requestIds = 0;

  const handle = (request: SaasRequest, response: ServerResponse): void => {
    const fault = faults.get(request.path)?.shift();
    if (fault) {
      response.writeHead(fault.status, { 'Content-Type': 'application/json', ...fault.headers });
      return void response.end(fault.body);
    }
    const reject = (status: number, problems: string[], body: unknown): void => {
      violations.push(...problems.map((p) => `${request.method} ${request.path} ${p}`));
      answer(response, status, body);
    };
    if (request.path === '/v2/alerts' && request.method === 'POST') {
      const problems = shapeProblems('body', OPSGENIE_CREATE_ALERT, request.json);
      if (problems.length > 0)
        return reject(422, problems, { message: 'Request body is not processable', took: 0.001 });
      const auth = request.headers.authorization ?? '';
      if (!Object.values(OPSGENIE_KEYS).some((key) => auth === `GenieKey ${key}`))
        return answer(response, 401, { message: 'Could not authenticate', took: 0.001, requestId: 'r0' });
      accepted.opsgenie.push(request);
      return answer(response, 202, {
        result: 'Request will be processed',
        took: 0.01,
        requestId: `req-${++requestIds}`,
      });
    }
    if (request.path === '/v2/enqueue' && request.method === 'POST') {
      const problems = shapeProblems('body', PAGERDUTY_EVENT, request.json);
      if (problems.length > 0)
        return reject(400, problems, {
          status: 'invalid event',
          message: 'Event object is invalid',
          errors: problems,
        });
      const event = request.json as { routing_key: string; event_action: string; dedup_key?: string };
      if (!Object.values(PAGERDUTY_ROUTING_KEYS).includes(event.routing_key))
        return answer(response, 400, {
          status: 'invalid event',
          message: 'Event object is invalid',
          errors: ['Invalid routing key'],
        });
      const dedupKey = event.dedup_key ?? `generated-${++requestIds}`;
      if (event.event_action === 'trigger') incidents.set(dedupKey, 'triggered');
      else if (incidents.has(dedupKey))
        incidents.set(dedupKey, event.event_action === 'resolve' ? 'resolved' : 'acknowledged');
      accepted.pagerduty.push(request);
      return answer(response, 202, { status: 'success', message: 'Event processed', dedup_key: dedupKey });
    }
    if (request.path === '/api/v4/posts' && request.method === 'POST') {
      if (request.headers.authorization !== `Bearer ${MATTERMOST_TOKEN}`)
        return answer(response, 401, { id: 'api.context.session_expired.app_error', status_code: 401 });
      const problems = shapeProblems('body', MATTERMOST_CREATE_POST, request.json);
      if (problems.length > 0)
        return reject(400, problems, { id: 'api.context.invalid_body_param.app_error', status_code: 400 });
      const post = request.json as { channel_id: string; message: string };
      if (!MATTERMOST_CHANNELS.includes(post.channel_id))
        return answer(response, 403, { id: 'api.context.permissions.app_error', status_code: 403 });
      accepted.mattermost.push(request);
      return answer(response, 201, {
        id: `post${++requestIds}`,
        channel_id: post.channel_id,
        message: post.message,
      });
    }
    if (request.path === GOOGLE_CHAT_SPACE && request.method === 'POST') {
      const expected = new URLSearchParams(GOOGLE_CHAT_QUERY);
      if (
        request.query.get('token') !== expected.get('token') ||
        request.query.get('key') !== expected.get('key')
      )
        return answer(response, 401, {
          error: {
            code: 401,
            message: 'Request had invalid authentication credentials.',
            status: 'UNAUTHENTICATED',
          },
        });
      const problems = shapeProblems('body', GOOGLE_CHAT_MESSAGE, request.json);
      const option = request.query.get('messageReplyOption');
      if (option !== null && !GOOGLE_CHAT_REPLY_OPTIONS.includes(option))
        problems.push(`query: messageReplyOption ${option}`);
      if (problems.length > 0)
        return reject(400, problems, {
          error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' },
        });
      accepted.googlechat.push(request);
      const threadKey = request.query.get('threadKey');
      return answer(response, 200, {
        name: `spaces/AAAA1234/messages/m${++requestIds}`,
        text: (request.json as { text?: string }).text ?? '',
        thread: { name: `spaces/AAAA1234/threads/${threadKey ?? `t${requestIds}`}` },
      });
    }
    answer(response, 404, { message: 'Not Found' });
  };

  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (c: Buffer) => chunks.push(c));
    incoming.on('end', () => {
      const url = new URL(incoming.url ?? '/', 'http://double');
      let json: unknown;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      } catch {
        json = undefined;
      }
      handle(
        {
          method: incoming.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          headers: incoming.headers,
          json,
        },
        response,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    accepted,
    violations,
    incidents,
    failNext(path, fault) {
      faults.set(path, [...(faults.get(path) ?? []), fault]);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
