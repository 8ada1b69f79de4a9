// The CLI's plain client (rollout verbs, list rollouts, status): the requests client-node's CustomObjectsApi would send, and its failures typed as client-node's are.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CustomObjectClient, openCustomObjectClient } from '../../../src/kube/custom-object-client.ts';
import { isNotFound, kubeCall, KubeConflictError, KubeTransientError } from '../../../src/kube/errors.ts';
import { MATERIAL_RECHECK_MS } from '../../../src/kube/plain-kube-http.ts';
import { readSimpleKubeconfig, type SimpleKubeconfig } from '../../../src/kube/simple-kubeconfig.ts';
import { selfSignedCertificate, startTlsTestServer } from '../../support/tls-test-server.ts';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}

const TOKEN = 'cli-token-never-in-an-error';
const seen: Seen[] = [];
/** How many requests each connection has carried. */
const requestsOn = new WeakMap<object, number>();
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    res.setHeader('content-type', 'application/json');
    const count = (requestsOn.get(req.socket) ?? 0) + 1;
    requestsOn.set(req.socket, count);
    // As an API server's idle keep-alive timeout closing a connection just as a request is written on it.
    if (req.url?.includes('/dropped') && count > 1) return req.socket.destroy();
    if (req.url?.includes('/missing')) {
      res.statusCode = 404;
      res.end(
        JSON.stringify({
          kind: 'Status',
          reason: 'NotFound',
          message: 'rollouts "missing" not found',
          code: 404,
        }),
      );
    } else if (req.url?.includes('/status')) {
      res.statusCode = 409;
      res.end(
        JSON.stringify({
          kind: 'Status',
          reason: 'Conflict',
          message: 'the object has been modified',
          code: 409,
        }),
      );
    } else res.end(JSON.stringify({ metadata: { name: 'web' }, spec: { paused: false } }));
  });
});
let client: CustomObjectClient;

/** The CLI's simple kubeconfig of `server`, as readSimpleKubeconfig leaves it. */
function simple(server: string, token?: string): SimpleKubeconfig {
  return {
    namespace: 'shop',
    cluster: { name: 'c', server, skipTLSVerify: true },
    user: { name: 'u', token },
  };
}
const ref = {
  group: 'rollgate.dev',
  version: 'v1alpha1',
  namespace: 'shop',
  plural: 'rollouts',
  name: 'web',
};
const request = { verb: 'get', kind: 'Rollout', namespace: 'shop', name: 'web' } as const;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new CustomObjectClient(simple(`http://127.0.0.1:${port}`, TOKEN));
});

afterAll(() => {
  client.close();
  server.close();
});

describe('CustomObjectClient', () => {
  it('reads an object and merge-patches it as its field manager, with the kubeconfig token', async () => {
    expect(await client.getNamespacedCustomObject(ref)).toEqual({
      metadata: { name: 'web' },
      spec: { paused: false },
    });
    await client.patchNamespacedCustomObject({
      ...ref,
      body: { spec: { paused: true } },
      fieldManager: 'rollgate-verb',
    });
    const [get, patch] = seen.slice(-2);
    expect(get).toMatchObject({
      method: 'GET',
      url: '/apis/rollgate.dev/v1alpha1/namespaces/shop/rollouts/web',
    });
    expect(get?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(get?.headers['user-agent']).toMatch(/^kubernetes-client-javascript\//);
    expect(patch).toMatchObject({
      method: 'PATCH',
      url: '/apis/rollgate.dev/v1alpha1/namespaces/shop/rollouts/web?fieldManager=rollgate-verb',
      body: '{"spec":{"paused":true}}',
    });
    expect(patch?.headers['content-type']).toBe('application/merge-patch+json');
  });

  it('lists the objects of one namespace or of all, by label selector when given', async () => {
    const api = { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts' };
    await client.listNamespacedCustomObject({ ...api, namespace: 'shop' });
    await client.listClusterCustomObject({ ...api, labelSelector: 'app in (web,api)' });
    expect(seen.slice(-2).map((request) => [request.method, request.url])).toEqual([
      ['GET', '/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts'],
      ['GET', '/apis/argoproj.io/v1alpha1/rollouts?labelSelector=app%20in%20(web%2Capi)'],
    ]);
  });

  it('fails as client-node does: a 404 is not found, a 409 a conflict, no server a transient network error', async () => {
    const missing = await kubeCall(request, () =>
      client.getNamespacedCustomObject({ ...ref, name: 'missing' }),
    ).catch((err: unknown) => err);
    expect(isNotFound(missing)).toBe(true);
    expect(inspect(missing, { depth: 10 })).not.toContain(TOKEN);
    expect((missing as Error).message).toBe(
      'get Rollout/shop/web: HTTP 404 NotFound: rollouts "missing" not found',
    );
    const conflict = await kubeCall(request, () =>
      client.patchNamespacedCustomObjectStatus({ ...ref, body: { status: { abort: true } } }),
    ).catch((err: unknown) => err);
    expect(conflict).toBeInstanceOf(KubeConflictError);

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const nobody = new CustomObjectClient(simple(`http://127.0.0.1:${port}`));
    const refused = await kubeCall(request, () => nobody.getNamespacedCustomObject(ref)).catch(
      (err: unknown) => err,
    );
    nobody.close();
    expect(refused).toBeInstanceOf(KubeTransientError);
    expect((refused as Error).message).toBe('get Rollout/shop/web: network error ECONNREFUSED: fetch failed');
  });

  it('sends a read again on a fresh connection when the kept-alive one was closed under it', async () => {
    await client.getNamespacedCustomObject(ref);
    const before = seen.length;
    expect(await client.getNamespacedCustomObject({ ...ref, name: 'dropped' })).toEqual({
      metadata: { name: 'web' },
      spec: { paused: false },
    });
    expect(seen.length - before).toBe(2);
  });
});

describe('CustomObjectClient with files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'custom-object-client-'));

  function kubeconfig(server: string, cluster: string): string {
    const file = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
    writeFileSync(
      file,
      `clusters:\n- name: c\n  cluster:\n    server: ${server}\n${cluster}users:\n- name: u\n  user: {token: abc}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`,
    );
    return file;
  }

  it('reads the CA file again while a command runs (status --watch): a rotated CA is trusted within a second', async () => {
    const tls = await startTlsTestServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    vi.useFakeTimers({ toFake: ['hrtime'] });
    const ca = join(dir, 'ca.crt');
    writeFileSync(ca, selfSignedCertificate().cert);
    const watching = openCustomObjectClient(
      readSimpleKubeconfig({ kubeconfig: kubeconfig(tls.url, '    certificate-authority: ca.crt\n') })!,
    )!;
    try {
      const refused = await watching.readPath('/x').catch((err: unknown) => err);
      expect(((refused as Error).cause as { code?: string }).code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
      writeFileSync(ca, tls.cert);
      vi.advanceTimersByTime(MATERIAL_RECHECK_MS);
      expect(await watching.readPath('/x')).toEqual({ ok: true });
    } finally {
      watching.close();
      vi.useRealTimers();
      await tls.close();
    }
  });

  it('leaves a kubeconfig whose file cannot be read to client-node, whose error it is', () => {
    mkdirSync(join(dir, 'not-a-file'));
    const simple = readSimpleKubeconfig({
      kubeconfig: kubeconfig('https://127.0.0.1:1', '    certificate-authority: not-a-file\n'),
    });
    expect(simple).toBeDefined();
    expect(openCustomObjectClient(simple!)).toBeUndefined();
  });
});
