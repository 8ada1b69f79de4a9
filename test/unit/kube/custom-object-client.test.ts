// The CLI's plain client (rollout verbs, list rollouts): the requests client-node's CustomObjectsApi would send, and its failures typed as client-node's are.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectClient } from '../../../src/kube/custom-object-client.ts';
import { isNotFound, kubeCall, KubeConflictError, KubeTransientError } from '../../../src/kube/errors.ts';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}

const seen: Seen[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    res.setHeader('content-type', 'application/json');
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
  client = new CustomObjectClient({
    server: `http://127.0.0.1:${port}`,
    namespace: 'shop',
    skipTlsVerify: true,
    authorization: 'Bearer abc',
  });
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
    expect(get?.headers.authorization).toBe('Bearer abc');
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
    const nobody = new CustomObjectClient({
      server: `http://127.0.0.1:${port}`,
      namespace: 'shop',
      skipTlsVerify: true,
    });
    const refused = await kubeCall(request, () => nobody.getNamespacedCustomObject(ref)).catch(
      (err: unknown) => err,
    );
    nobody.close();
    expect(refused).toBeInstanceOf(KubeTransientError);
    expect((refused as Error).message).toBe('get Rollout/shop/web: network error ECONNREFUSED: fetch failed');
  });
});
