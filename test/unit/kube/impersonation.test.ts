// A source with serviceAccountName sends its sync's requests as that ServiceAccount (Impersonate-User),
// with Rollgate's own credentials; everything else keeps Rollgate's identity.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createImpersonatingKubeClients, makePooledApiClient } from '../../../src/kube/client.ts';
import {
  ImpersonatedGroupError,
  impersonationHeaders,
  serviceAccountUser,
} from '../../../src/kube/impersonation.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { sourceScopeOf } from '../../../src/sync/source-scope.ts';

let server: Server;
let kubeConfig: KubeConfig;
const seen: IncomingHttpHeaders[] = [];
/** Each request's Impersonate-Group lines as sent, one entry per line. */
const groupLines: string[][] = [];

beforeAll(async () => {
  // Discovery of v1, an empty ConfigMap list, or 404 for a read: enough for the headers.
  server = createServer((req, res) => {
    seen.push(req.headers);
    groupLines.push(
      req.rawHeaders.filter((_, i, all) => i % 2 === 1 && all[i - 1]?.toLowerCase() === 'impersonate-group'),
    );
    res.setHeader('content-type', 'application/json');
    if (req.url === '/api/v1') {
      res.end(
        JSON.stringify({
          kind: 'APIResourceList',
          groupVersion: 'v1',
          resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get'] }],
        }),
      );
      return;
    }
    if (req.url?.includes('/configmaps/')) {
      res.statusCode = 404;
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'NotFound',
          code: 404,
        }),
      );
      return;
    }
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: {}, items: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'rollgate', token: 'rollgate-token' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'rollgate' }],
    currentContext: 'c',
  });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
  groupLines.length = 0;
});

describe('impersonation headers', () => {
  it("a ServiceAccount's user name, and the user header alone (the API server adds its groups)", () => {
    expect(serviceAccountUser('team-a', 'deployer')).toBe('system:serviceaccount:team-a:deployer');
    expect(impersonationHeaders('system:serviceaccount:team-a:deployer')).toEqual({
      'Impersonate-User': 'system:serviceaccount:team-a:deployer',
    });
  });

  it("an impersonating client sends the header with Rollgate's own credentials; a plain one sends none", async () => {
    const acting = makePooledApiClient(kubeConfig, CoreV1Api, {
      impersonate: 'system:serviceaccount:team-a:deployer',
    });
    const own = makePooledApiClient(kubeConfig, CoreV1Api);
    await acting.listNamespacedConfigMap({ namespace: 'team-a' });
    await own.listNamespacedConfigMap({ namespace: 'team-a' });
    expect(seen.map((h) => [h['impersonate-user'], h.authorization])).toEqual([
      ['system:serviceaccount:team-a:deployer', 'Bearer rollgate-token'],
      [undefined, 'Bearer rollgate-token'],
    ]);
    expect(seen.some((h) => h['impersonate-group'] !== undefined)).toBe(false);
  });
});

describe("a source's applier", () => {
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'web' };

  it('acts as serviceAccountName in the source’s own namespace', async () => {
    const applier = new ObjectApplier(kubeConfig, {
      source: 'tenant',
      defaultNamespace: 'team-a',
      scope: sourceScopeOf({ namespace: 'team-a' }, 'default'),
      serviceAccountName: 'deployer',
    });
    expect(applier.actingAs).toBe('system:serviceaccount:team-a:deployer');
    expect(await applier.read(ref)).toBeUndefined();
    // API discovery, then the read: both as the ServiceAccount.
    expect(seen.map((h) => h['impersonate-user'])).toEqual([
      'system:serviceaccount:team-a:deployer',
      'system:serviceaccount:team-a:deployer',
    ]);
  });

  it('without a namespace of its own, the ServiceAccount is in kubernetes.defaultNamespace', () => {
    const applier = new ObjectApplier(kubeConfig, {
      source: 'tenant',
      defaultNamespace: 'apps',
      scope: sourceScopeOf({}, 'apps'),
      serviceAccountName: 'deployer',
    });
    expect(applier.actingAs).toBe('system:serviceaccount:apps:deployer');
  });

  it("without serviceAccountName, Rollgate's own identity", async () => {
    const applier = new ObjectApplier(kubeConfig, { source: 'apps', defaultNamespace: 'team-a' });
    expect(applier.actingAs).toBeUndefined();
    await applier.read(ref);
    expect(seen.map((h) => h['impersonate-user'])).toEqual([undefined, undefined]);
  });
});

describe('a signed-in person (the dashboard)', () => {
  it('is sent as the user and one Impersonate-Group line per group, with Rollgate’s credentials', async () => {
    const clients = createImpersonatingKubeClients(kubeConfig, {
      user: 'alice@example.com',
      groups: ['team-a', 'oidc:ops'],
    });
    await clients.core.listNamespacedConfigMap({ namespace: 'team-a' });
    expect(seen.map((h) => [h['impersonate-user'], h.authorization])).toEqual([
      ['alice@example.com', 'Bearer rollgate-token'],
    ]);
    // Separate lines: the API server would read one comma-joined line as a single group "team-a,oidc:ops".
    expect(groupLines).toEqual([['team-a', 'oidc:ops']]);
  });

  it('with no groups, the user alone', async () => {
    const clients = createImpersonatingKubeClients(kubeConfig, { user: 'bob@example.com', groups: [] });
    await clients.core.listNamespacedConfigMap({ namespace: 'team-a' });
    expect(seen.map((h) => h['impersonate-user'])).toEqual(['bob@example.com']);
    expect(groupLines).toEqual([[]]);
  });

  it('a group name with a comma is refused before any request (it could not be told apart)', () => {
    expect(() =>
      createImpersonatingKubeClients(kubeConfig, { user: 'eve', groups: ['a,system:masters'] }),
    ).toThrow(ImpersonatedGroupError);
    expect(seen).toEqual([]);
  });
});
