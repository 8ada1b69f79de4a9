// The reconciler's plain HTTP writes: which kubeconfigs take them, the requests client-node's clients would
// build, and answers and failures typed as client-node's are (errors.ts), credentials never in an error.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import {
  KubeConfig,
  type AppsV1Api,
  type Cluster,
  type CoreV1Api,
  type CoreV1Event,
  type CustomObjectsApi,
  type User,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  APPLY_PATCH,
  createImpersonatingKubeClients,
  createKubeClients,
  MERGE_PATCH,
} from '../../../src/kube/client.ts';
import {
  isNotFound,
  kubeCall,
  KubeConflictError,
  KubeForbiddenError,
  KubeInvalidError,
  KubeThrottledError,
  KubeTransientError,
} from '../../../src/kube/errors.ts';
import type { KubeRequestObservation } from '../../../src/kube/kube-request.ts';
import {
  MATERIAL_RECHECK_MS,
  PlainKubeHttp,
  plainKubeTargetOf,
  type PlainKubeConnection,
} from '../../../src/kube/plain-kube-http.ts';
import { plainWriteRequests, queryOf, withPlainWrites } from '../../../src/kube/plain-write-clients.ts';
import { RequestRateLimiter } from '../../../src/kube/request-rate-limit.ts';
import { startTlsTestServer } from '../../support/tls-test-server.ts';

const TOKEN = 'secret-token-never-logged';
const EVENT: CoreV1Event = { metadata: { name: 'web.1' }, involvedObject: {} };
const cluster = (fields: Partial<Cluster> = {}): Cluster => ({
  name: 'c',
  server: 'https://api.example:6443',
  skipTLSVerify: false,
  ...fields,
});
const user = (fields: Partial<User> = {}): User => ({ name: 'u', ...fields });

/** A KubeConfig of one context, as loadFromOptions leaves it. */
function kubeConfigOf(
  server: string,
  userFields: Partial<User>,
  clusterFields: Partial<Cluster> = {},
): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster({ server, ...clusterFields })],
    users: [user(userFields)],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kubeConfig;
}

describe('plainKubeTargetOf', () => {
  it('takes a token, a password or inline TLS material, as client-node would send them', () => {
    expect(
      plainKubeTargetOf(cluster({ server: 'https://api.example:6443/' }), user({ token: TOKEN })),
    ).toEqual({
      target: {
        server: 'https://api.example:6443',
        skipTlsVerify: false,
        authorization: `Bearer ${TOKEN}`,
      },
      fromFiles: false,
    });
    expect(
      plainKubeTargetOf(cluster(), user({ username: 'ann', password: 'pw' }))?.target.authorization,
    ).toBe(`Basic ${Buffer.from('ann:pw').toString('base64')}`);
    // A token wins over a password, as in client-node.
    expect(
      plainKubeTargetOf(cluster(), user({ username: 'ann', password: 'pw', token: 't' }))?.target
        .authorization,
    ).toBe('Bearer t');
    const tls = plainKubeTargetOf(
      cluster({
        caData: Buffer.from('CA').toString('base64'),
        tlsServerName: 'kubernetes',
        skipTLSVerify: true,
      }),
      user({
        certData: Buffer.from('CERT').toString('base64'),
        keyData: Buffer.from('KEY').toString('base64'),
      }),
    );
    expect(tls?.target).toMatchObject({
      ca: Buffer.from('CA'),
      cert: Buffer.from('CERT'),
      key: Buffer.from('KEY'),
      skipTlsVerify: true,
      tlsServerName: 'kubernetes',
      authorization: undefined,
    });
  });

  it.each([
    ['an exec plugin', cluster(), user({ exec: { command: 'aws' } })],
    [
      'an OIDC auth provider',
      cluster(),
      user({ authProvider: { name: 'oidc', config: { 'id-token': 'x' } } }),
    ],
    [
      'a token file with more configuration',
      cluster(),
      user({ authProvider: { name: 'tokenFile', config: { tokenFile: '/t', other: 'x' } } }),
    ],
    ['a file that cannot be read', cluster({ caFile: '/no/such/ca.crt' }), user({ token: 't' })],
    ["the kubeconfig's own impersonation", cluster(), user({ token: 't', impersonateUser: 'bob' })],
    ['a proxy', cluster({ proxyUrl: 'http://proxy:3128' }), user({ token: 't' })],
    [
      'http without insecure-skip-tls-verify',
      cluster({ server: 'http://127.0.0.1:1' }),
      user({ token: 't' }),
    ],
    ['a server that is no URL', cluster({ server: 'not a url' }), user({ token: 't' })],
  ])('leaves %s to client-node', (_name, c, u) => {
    expect(plainKubeTargetOf(c, u)).toBeUndefined();
  });

  it('reads the CA, certificate, key and in-cluster token from their files, a file over inline data', () => {
    const files: Record<string, string> = {
      '/ca': 'CA',
      '/crt': 'CERT',
      '/key': 'KEY',
      '/token': 'sa-token',
    };
    const read = (path: string): Buffer => Buffer.from(files[path]!);
    const inCluster = plainKubeTargetOf(
      cluster({ caFile: '/ca', caData: Buffer.from('other').toString('base64') }),
      user({ authProvider: { name: 'tokenFile', config: { tokenFile: '/token' } } }),
      read,
    );
    expect(inCluster).toEqual({
      target: {
        server: 'https://api.example:6443',
        ca: Buffer.from('CA'),
        skipTlsVerify: false,
        authorization: 'Bearer sa-token',
      },
      fromFiles: true,
    });
    expect(
      plainKubeTargetOf(cluster(), user({ certFile: '/crt', keyFile: '/key' }), read)?.target,
    ).toMatchObject({
      cert: Buffer.from('CERT'),
      key: Buffer.from('KEY'),
    });
  });
});

describe('plainWriteRequests', () => {
  it("builds client-node's paths, query parameters (in its order) and Content-Types", () => {
    expect(queryOf({ force: true, fieldManager: 'rollgate', dryRun: 'All', pretty: 'true' })).toBe(
      '?pretty=true&dryRun=All&fieldManager=rollgate&force=true',
    );
    expect(
      plainWriteRequests.createNamespacedReplicaSet({
        namespace: 'shop',
        body: { kind: 'ReplicaSet' },
        fieldManager: 'rollgate',
      }),
    ).toEqual({
      method: 'POST',
      path: '/apis/apps/v1/namespaces/shop/replicasets?fieldManager=rollgate',
      body: { kind: 'ReplicaSet' },
    });
    expect(
      plainWriteRequests.patchNamespacedReplicaSet(
        {
          namespace: 'shop',
          name: 'web-1',
          body: { spec: { replicas: 2 } },
          fieldManager: 'rollgate',
          dryRun: 'All',
        },
        'application/merge-patch+json',
      ),
    ).toEqual({
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/shop/replicasets/web-1?dryRun=All&fieldManager=rollgate',
      body: { spec: { replicas: 2 } },
      contentType: 'application/merge-patch+json',
    });
    const rollout = {
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: 'shop',
      plural: 'rollouts',
      name: 'web',
    };
    expect(
      plainWriteRequests.replaceNamespacedCustomObjectStatus({
        ...rollout,
        body: {},
        fieldManager: 'rollgate',
      }),
    ).toEqual({
      method: 'PUT',
      path: '/apis/rollgate.dev/v1alpha1/namespaces/shop/rollouts/web/status?fieldManager=rollgate',
      body: {},
    });
    expect(
      plainWriteRequests.patchNamespacedCustomObject({ ...rollout, body: {} }, 'application/apply-patch+yaml')
        ?.path,
    ).toBe('/apis/rollgate.dev/v1alpha1/namespaces/shop/rollouts/web');
    expect(plainWriteRequests.patchNamespacedCustomObjectStatus({ ...rollout, body: {} }, 'x')?.path).toBe(
      '/apis/rollgate.dev/v1alpha1/namespaces/shop/rollouts/web/status',
    );
    expect(plainWriteRequests.createNamespacedEvent({ namespace: 'shop', body: EVENT })?.path).toBe(
      '/api/v1/namespaces/shop/events',
    );
    expect(
      plainWriteRequests.patchNamespacedEvent({ namespace: 'shop', name: 'web.1', body: {} }, 'x')?.path,
    ).toBe('/api/v1/namespaces/shop/events/web.1');
    expect(plainWriteRequests.readNamespacedEvent({ namespace: 'shop', name: 'a/b' })).toEqual({
      method: 'GET',
      path: '/api/v1/namespaces/shop/events/a%2Fb',
    });
  });

  it('leaves a call missing a required field to client-node, whose RequiredError it is', () => {
    expect(
      plainWriteRequests.patchNamespacedReplicaSet(
        { namespace: 'shop', body: {} } as never,
        'application/merge-patch+json',
      ),
    ).toBeUndefined();
    expect(plainWriteRequests.createNamespacedEvent({ namespace: 'shop' } as never)).toBeUndefined();
  });
});

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  body: string;
}

/** A stand-in API server: each test sets how it answers; every request is recorded. */
const seen: Seen[] = [];
let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('{}');
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, rawHeaders: req.rawHeaders, body });
    answer(req, res);
  });
});
let base = '';
const observations: KubeRequestObservation[] = [];
const connection: {
  limiter: RequestRateLimiter | undefined;
  observers: Set<(o: KubeRequestObservation) => void>;
} = {
  limiter: undefined,
  observers: new Set([(o) => observations.push(o)]),
};

function status(
  res: ServerResponse,
  code: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code }));
}

function plainHttp(kubeConfig: KubeConfig, options: { idleTimeoutMs?: number } = {}): PlainKubeHttp {
  return new PlainKubeHttp(kubeConfig, connection as PlainKubeConnection, {
    userAgent: 'kubernetes-client-javascript/test',
    ...options,
  });
}

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  seen.length = 0;
  observations.length = 0;
  connection.limiter = undefined;
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ metadata: { name: 'web-1', resourceVersion: '42' } }));
  };
});

describe('PlainKubeHttp', () => {
  it('sends the body as JSON with the headers client-node sends, answers with the parsed JSON, counts the request', async () => {
    const http = plainHttp(kubeConfigOf(base, { token: TOKEN }, { skipTLSVerify: true }));
    const route = http.route()!;
    const answered = await http.send(route, {
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/shop/replicasets/web-1?fieldManager=rollgate',
      body: { spec: { replicas: 3 } },
      contentType: 'application/merge-patch+json',
    });
    expect(answered).toEqual({ metadata: { name: 'web-1', resourceVersion: '42' } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      method: 'PATCH',
      url: '/apis/apps/v1/namespaces/shop/replicasets/web-1?fieldManager=rollgate',
      body: '{"spec":{"replicas":3}}',
      headers: {
        accept: 'application/json, */*;q=0.8',
        'user-agent': 'kubernetes-client-javascript/test',
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/merge-patch+json',
        'content-length': '23',
        connection: 'keep-alive',
      },
    });
    expect(observations).toEqual([
      { verb: 'patch', resource: 'replicasets.apps', code: '200', seconds: expect.any(Number) as number },
    ]);
  });

  it('sends each impersonated group as a header line of its own', async () => {
    const http = plainHttp(kubeConfigOf(base, { token: TOKEN }, { skipTLSVerify: true }));
    await http.send(http.route()!, {
      method: 'GET',
      path: '/api/v1/namespaces/shop/events/x',
      headers: { 'Impersonate-User': 'ann', 'Impersonate-Group': ['devs', 'ops'] },
    });
    const lines = seen[0]!.rawHeaders.filter((_v, i) => i % 2 === 0).map((name) => name.toLowerCase());
    expect(lines.filter((name) => name === 'impersonate-group')).toHaveLength(2);
    expect(seen[0]!.headers['impersonate-user']).toBe('ann');
    expect(seen[0]!.headers['impersonate-group']).toBe('devs, ops');
  });

  it('takes a token from the shared rate limiter before each request', async () => {
    const waits: number[] = [];
    connection.limiter = new RequestRateLimiter(
      { qps: 1, burst: 1 },
      { now: () => new Date(0) },
      async (ms) => {
        waits.push(ms);
      },
    );
    const http = plainHttp(kubeConfigOf(base, {}, { skipTLSVerify: true }));
    await http.send(http.route()!, { method: 'GET', path: '/api/v1/namespaces/shop/events/a' });
    await http.send(http.route()!, { method: 'GET', path: '/api/v1/namespaces/shop/events/b' });
    expect(waits).toEqual([1000]);
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it.each([
    [409, 'Conflict', KubeConflictError],
    [422, 'Invalid', KubeInvalidError],
    [403, 'Forbidden', KubeForbiddenError],
    [500, 'InternalError', KubeTransientError],
  ])('fails with %i as client-node does, mapped to the same typed error', async (code, reason, type) => {
    answer = (_req, res) => status(res, code, reason, `the ${reason.toLowerCase()} message`);
    const http = plainHttp(kubeConfigOf(base, { token: TOKEN }, { skipTLSVerify: true }));
    const request = { verb: 'patch', kind: 'ReplicaSet', namespace: 'shop', name: 'web-1' } as const;
    const err = await kubeCall(request, () =>
      http.send(http.route()!, { method: 'PATCH', path: '/x', body: {} }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect((err as Error).message).toBe(
      `patch ReplicaSet/shop/web-1: HTTP ${code} ${reason}: the ${reason.toLowerCase()} message`,
    );
    // The credentials are in no part of the error, however it is printed.
    expect(inspect(err, { depth: 10 })).not.toContain(TOKEN);
    expect(JSON.stringify(err)).not.toContain(TOKEN);
    expect(observations.map((o) => o.code)).toEqual([String(code)]);
  });

  it('tells a 404 as not found, a 429 with its Retry-After, a 401 without its body', async () => {
    const http = plainHttp(kubeConfigOf(base, { token: TOKEN }, { skipTLSVerify: true }));
    const request = { verb: 'get', kind: 'Event', namespace: 'shop', name: 'x' } as const;
    const send = (): Promise<unknown> =>
      kubeCall(request, () => http.send(http.route()!, { method: 'GET', path: '/x' }));
    answer = (_req, res) => status(res, 404, 'NotFound', 'events "x" not found');
    expect(isNotFound(await send().catch((e: unknown) => e))).toBe(true);
    answer = (_req, res) => status(res, 429, 'TooManyRequests', 'slow down', { 'retry-after': '3' });
    const throttled = await send().catch((e: unknown) => e);
    expect(throttled).toBeInstanceOf(KubeThrottledError);
    expect((throttled as KubeThrottledError).retryAfterMs).toBe(3000);
    answer = (_req, res) => status(res, 401, 'Unauthorized', 'Unauthorized');
    const unauthorized = await send().catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(KubeForbiddenError);
    expect((unauthorized as Error).message).toBe('get Event/shop/x: HTTP 401: no message');
  });

  it('never follows a redirect (the credentials would go with it)', async () => {
    answer = (req, res) => {
      if (req.url === '/elsewhere') return res.end('{}');
      res.writeHead(307, { location: `${base}/elsewhere` });
      res.end();
    };
    const http = plainHttp(kubeConfigOf(base, { token: TOKEN }, { skipTLSVerify: true }));
    const request = { verb: 'update', kind: 'Rollout', namespace: 'shop', name: 'web' } as const;
    const err = await kubeCall(request, () =>
      http.send(http.route()!, { method: 'PUT', path: '/x', body: {} }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeInvalidError);
    expect(seen.map((s) => s.url)).toEqual(['/x']);
  });

  it('sends a request again on a fresh connection when a kept-alive one was closed under it, never a fresh one', async () => {
    // The server drops every connection at its second request, unanswered: as one closed while idle.
    const requestsOn = new WeakMap<object, number>();
    answer = (req, res) => {
      const count = (requestsOn.get(req.socket) ?? 0) + 1;
      requestsOn.set(req.socket, count);
      if (count === 2) return req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    };
    const http = plainHttp(kubeConfigOf(base, {}, { skipTLSVerify: true }));
    const put = {
      method: 'PUT',
      path: '/apis/rollgate.dev/v1alpha1/namespaces/shop/rollouts/web/status',
      body: {},
    } as const;
    expect(await http.send(http.route()!, put)).toEqual({ ok: true });
    expect(await http.send(http.route()!, put)).toEqual({ ok: true });
    expect(seen).toHaveLength(3);
    expect(observations.map((o) => o.code)).toEqual(['200', '200']);

    // A fresh connection's failure is the request's: not sent again.
    observations.length = 0;
    seen.length = 0;
    answer = (req) => req.socket.destroy();
    const fresh = plainHttp(kubeConfigOf(base, {}, { skipTLSVerify: true }));
    const request = { verb: 'update', kind: 'Rollout', namespace: 'shop', name: 'web' } as const;
    const err = await kubeCall(request, () => fresh.send(fresh.route()!, put)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeTransientError);
    expect(seen).toHaveLength(1);
    expect(observations.map((o) => o.code)).toEqual(['error']);
  });

  it('fails as a transient network error when the server refuses or never answers', async () => {
    const request = { verb: 'get', kind: 'Event', namespace: 'shop', name: 'x' } as const;
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = plainHttp(kubeConfigOf(`http://127.0.0.1:${port}`, {}, { skipTLSVerify: true }));
    const err = await kubeCall(request, () =>
      refused.send(refused.route()!, { method: 'GET', path: '/x' }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeTransientError);
    expect((err as KubeTransientError).reason).toBe('ECONNREFUSED');
    expect(observations.map((o) => o.code)).toEqual(['error']);

    answer = () => undefined;
    const silent = plainHttp(kubeConfigOf(base, {}, { skipTLSVerify: true }), { idleTimeoutMs: 50 });
    const timedOut = await kubeCall(request, () =>
      silent.send(silent.route()!, { method: 'GET', path: '/x' }),
    ).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(KubeTransientError);
    expect((timedOut as KubeTransientError).reason).toBe('ETIMEDOUT');
  });

  it('reads files again after a second: a rotated token gets a new pool, an unchanged one keeps its own', () => {
    let now = 0;
    const files: Record<string, string> = { '/token': 'one' };
    const http = new PlainKubeHttp(
      kubeConfigOf(
        base,
        { authProvider: { name: 'tokenFile', config: { tokenFile: '/token' } } },
        { skipTLSVerify: true },
      ),
      connection as PlainKubeConnection,
      { userAgent: 'test', now: () => now, readMaterial: (path) => Buffer.from(files[path]!) },
    );
    const first = http.route()!;
    expect(first.target.authorization).toBe('Bearer one');
    files['/token'] = 'two';
    now = MATERIAL_RECHECK_MS - 1;
    expect(http.route()).toBe(first);
    now = MATERIAL_RECHECK_MS;
    const unchanged = http.route()!;
    expect(unchanged.target.authorization).toBe('Bearer two');
    expect(unchanged.agent).not.toBe(first.agent);
    now = 2 * MATERIAL_RECHECK_MS;
    expect(http.route()!.agent).toBe(unchanged.agent);
  });

  it('follows the current context, and has no route for a context client-node must send', () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [
        cluster({ name: 'a', server: 'https://a.example' }),
        cluster({ name: 'b', server: 'https://b.example' }),
      ],
      users: [user({ name: 'token', token: 't' }), user({ name: 'exec', exec: { command: 'aws' } })],
      contexts: [
        { name: 'simple', cluster: 'a', user: 'token' },
        { name: 'exec', cluster: 'b', user: 'exec' },
      ],
      currentContext: 'simple',
    });
    const http = plainHttp(kubeConfig);
    expect(http.route()?.target.server).toBe('https://a.example');
    expect(http.route()).toBe(http.route());
    kubeConfig.setCurrentContext('exec');
    expect(http.route()).toBeUndefined();
    kubeConfig.setCurrentContext('simple');
    expect(http.route()?.target.server).toBe('https://a.example');
  });
});

describe('PlainKubeHttp over TLS', () => {
  it('verifies the server against the kubeconfig CA, and only skips verification when told to', async () => {
    const tls = await startTlsTestServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    try {
      const trusting = plainHttp(
        kubeConfigOf(tls.url, { token: TOKEN }, { caData: tls.cert.toString('base64') }),
      );
      expect(await trusting.send(trusting.route()!, { method: 'GET', path: '/x' })).toEqual({ ok: true });

      const untrusting = plainHttp(kubeConfigOf(tls.url, { token: TOKEN }));
      const err = await untrusting
        .send(untrusting.route()!, { method: 'GET', path: '/x' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TypeError);
      expect(((err as Error).cause as { code?: string }).code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);

      const skipping = plainHttp(kubeConfigOf(tls.url, { token: TOKEN }, { skipTLSVerify: true }));
      expect(await skipping.send(skipping.route()!, { method: 'GET', path: '/x' })).toEqual({ ok: true });
    } finally {
      await tls.close();
    }
  });
});

describe('createKubeClients and impersonation', () => {
  it("sends a person's writes through client-node with their Impersonate headers, the process's own plainly without", async () => {
    const kubeConfig = kubeConfigOf(base, { token: TOKEN }, { skipTLSVerify: true });
    const patch = { namespace: 'shop', name: 'web-1', body: { spec: { replicas: 2 } } };
    await createKubeClients(kubeConfig).apps.patchNamespacedReplicaSet(patch, MERGE_PATCH);
    await createImpersonatingKubeClients(kubeConfig, {
      user: 'ann',
      groups: ['devs', 'ops'],
    }).apps.patchNamespacedReplicaSet(patch, MERGE_PATCH);
    // undici's fetch (client-node's) marks its requests with `sec-fetch-mode`; node:http sends none.
    const sender = (s: Seen): string => (s.headers['sec-fetch-mode'] === undefined ? 'plain' : 'client-node');
    expect(seen.map((s) => [sender(s), s.headers['impersonate-user'], s.headers['content-type']])).toEqual([
      ['plain', undefined, 'application/merge-patch+json'],
      ['client-node', 'ann', 'application/merge-patch+json'],
    ]);
    // One header line per group, as the API server must read them.
    const groups = seen[1]!.rawHeaders.filter((_v, i) => i % 2 === 0 && /^impersonate-group$/i.test(_v));
    expect(groups).toHaveLength(2);
  });
});

describe('withPlainWrites', () => {
  /** client-node's clients as doubles: each method records that it was called instead of the plain path. */
  function doubles(calls: string[]) {
    const api = (names: string[]) =>
      Object.fromEntries(
        names.map((name) => [
          name,
          (): Promise<unknown> => {
            calls.push(name);
            return Promise.resolve({ from: 'client-node' });
          },
        ]),
      );
    return {
      apps: api(['createNamespacedReplicaSet', 'patchNamespacedReplicaSet', 'listNamespacedReplicaSet']),
      core: api(['createNamespacedEvent', 'patchNamespacedEvent', 'readNamespacedEvent']),
      custom: api([
        'replaceNamespacedCustomObjectStatus',
        'patchNamespacedCustomObject',
        'patchNamespacedCustomObjectStatus',
      ]),
    } as never;
  }
  const types = new Map([
    [MERGE_PATCH, 'application/merge-patch+json'],
    [APPLY_PATCH, 'application/apply-patch+yaml'],
  ]);
  const rollout = {
    group: 'rollgate.dev',
    version: 'v1alpha1',
    namespace: 'shop',
    plural: 'rollouts',
    name: 'web',
  };

  it('sends merge and apply patches, creates and the status replace plainly; any other option or call to client-node', async () => {
    const calls: string[] = [];
    const clients = withPlainWrites(
      doubles(calls),
      plainHttp(kubeConfigOf(base, {}, { skipTLSVerify: true })),
      types,
    ) as {
      apps: AppsV1Api;
      core: CoreV1Api;
      custom: CustomObjectsApi;
    };
    await clients.apps.patchNamespacedReplicaSet({ namespace: 'shop', name: 'web-1', body: {} }, MERGE_PATCH);
    await clients.custom.patchNamespacedCustomObject(
      { ...rollout, body: {}, fieldManager: 'rollgate' },
      APPLY_PATCH,
    );
    await clients.custom.replaceNamespacedCustomObjectStatus({ ...rollout, body: {} });
    await clients.core.createNamespacedEvent({ namespace: 'shop', body: EVENT });
    expect(calls).toEqual([]);
    expect(seen.map((s) => `${s.method} ${s.headers['content-type']}`)).toEqual([
      'PATCH application/merge-patch+json',
      'PATCH application/apply-patch+yaml',
      'PUT application/json',
      'POST application/json',
    ]);

    // No option: client-node's JSON patch. An unknown option: client-node's to apply.
    await clients.apps.patchNamespacedReplicaSet({ namespace: 'shop', name: 'web-1', body: [] });
    await clients.core.createNamespacedEvent({ namespace: 'shop', body: EVENT }, { middleware: [] });
    await clients.apps.listNamespacedReplicaSet({ namespace: 'shop' });
    expect(calls).toEqual(['patchNamespacedReplicaSet', 'createNamespacedEvent', 'listNamespacedReplicaSet']);
    expect(seen).toHaveLength(4);
  });

  it('sends everything through client-node for a kubeconfig that is not simple', async () => {
    const calls: string[] = [];
    const http = plainHttp(kubeConfigOf(base, { exec: { command: 'aws' } }, { skipTLSVerify: true }));
    const clients = withPlainWrites(doubles(calls), http, types) as {
      apps: AppsV1Api;
    };
    expect(
      await clients.apps.patchNamespacedReplicaSet(
        { namespace: 'shop', name: 'web-1', body: {} },
        MERGE_PATCH,
      ),
    ).toEqual({
      from: 'client-node',
    });
    expect(calls).toEqual(['patchNamespacedReplicaSet']);
    expect(seen).toHaveLength(0);
  });
});
