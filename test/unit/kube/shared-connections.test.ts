import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createKubeClients } from '../../../src/kube/client.ts';
import { sandboxKubeConfig } from '../../../src/sandbox/sandbox-kubeconfig.ts';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** An API server that answers every GET with one ConfigMap and counts the TCP connections made to it. */
async function countingServer(): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: {} }));
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, connections: () => connections };
}

describe('shareConnections (through createKubeClients)', () => {
  it('sends one client’s requests over kept-alive connections instead of one connection each', async () => {
    const api = await countingServer();
    const { core } = createKubeClients(sandboxKubeConfig(api.url));
    for (let i = 0; i < 20; i++) await core.readNamespacedConfigMap({ name: 'x', namespace: 'default' });
    // undici may open a second connection while the first one's response is being read, then reuses both.
    expect(api.connections()).toBeLessThanOrEqual(2);
    await Promise.all(
      Array.from({ length: 20 }, () => core.readNamespacedConfigMap({ name: 'x', namespace: 'default' })),
    );
    // Concurrent requests open what they need at once, and no more than one each.
    expect(api.connections()).toBeLessThanOrEqual(21);
    const before = api.connections();
    for (let i = 0; i < 20; i++) await core.readNamespacedConfigMap({ name: 'x', namespace: 'default' });
    expect(api.connections()).toBe(before);
  });

  it('shares the connections between every client made from the same config', async () => {
    const api = await countingServer();
    const clients = createKubeClients(sandboxKubeConfig(api.url));
    await clients.core.readNamespacedConfigMap({ name: 'x', namespace: 'default' });
    // A client made later from the same config (as the object applier does) uses the same pool.
    const { core: later } = createKubeClients(clients.kubeConfig);
    for (let i = 0; i < 10; i++) await later.readNamespacedConfigMap({ name: 'x', namespace: 'default' });
    expect(api.connections()).toBeLessThanOrEqual(2);
  });
});
