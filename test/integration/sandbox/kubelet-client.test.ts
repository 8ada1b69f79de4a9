// The kubelet stand-in (`rollgate sandbox kubelet`) against an API server that applies its status writes
// out of order, as kube-apiserver may under load: a pod still becomes Ready.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.ts';
import { startKubeletClient } from '../../../src/sandbox/kubelet-client.ts';
import { sandboxKubeConfig } from '../../../src/sandbox/sandbox-kubeconfig.ts';
import { eventually } from '../../support/eventually.ts';

interface Pod {
  metadata: Record<string, unknown> & { resourceVersion: string };
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
}

const readyOf = (pod: Pod): unknown =>
  (pod.status.conditions as Array<{ type: string; status: string }> | undefined)?.find(
    (c) => c.type === 'Ready',
  )?.status;

/**
 * One pod, a pods watch and pods/status: the first status write is held `holdFirstMs` before it is
 * applied (later ones are applied at once), its MODIFIED event goes out before its answer, as a watch
 * often beats the response of the write it reports.
 */
async function startReorderingApiServer(holdFirstMs: number) {
  let version = 100;
  const pod: Pod = {
    metadata: {
      name: 'web-1',
      namespace: 'apps',
      uid: 'u-1',
      // Milliseconds, so the ready delay runs from now (kube-apiserver's are whole seconds).
      creationTimestamp: new Date().toISOString(),
      resourceVersion: String(version),
    },
    spec: { containers: [{ name: 'app', image: 'web:1' }] },
    status: { phase: 'Pending' },
  };
  const watchers: ServerResponse[] = [];
  const emit = (type: string): void => {
    for (const res of watchers) res.write(`${JSON.stringify({ type, object: pod })}\n`);
  };
  const applied: unknown[] = [];
  /** Set once the held first write has been applied and answered: nothing older is left to land. */
  const heldWrite = { answered: false };
  let writes = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/api/v1/pods' && url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      watchers.push(res);
      res.write(`${JSON.stringify({ type: 'ADDED', object: pod })}\n`);
      return;
    }
    if (req.method === 'PATCH' && url.pathname === '/api/v1/namespaces/apps/pods/web-1/status') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const [op] = JSON.parse(body) as Array<{ op: string; path: string; value: Record<string, unknown> }>;
        const apply = (): void => {
          if (JSON.stringify(pod.status) !== JSON.stringify(op?.value)) {
            pod.status = op?.value ?? {};
            version += 1;
            pod.metadata.resourceVersion = String(version);
            applied.push(readyOf(pod));
            emit('MODIFIED');
          }
        };
        const answer = (): void => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(pod));
        };
        writes += 1;
        if (writes === 1) {
          setTimeout(() => {
            apply();
            setTimeout(() => {
              answer();
              heldWrite.answered = true;
            }, 100);
          }, holdFirstMs);
        } else {
          apply();
          answer();
        }
      });
      return;
    }
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pod,
    applied,
    heldWrite,
    stop: async (): Promise<void> => {
      for (const res of watchers) res.end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('the kubelet stand-in against any API server', () => {
  it('makes a pod Ready even when its first status write is applied after a later one', async () => {
    // The first write (ContainerCreating) is applied 600 ms late, after the ready delay (200 ms) is over.
    const api = await startReorderingApiServer(600);
    const kubelet = await startKubeletClient({
      kubeConfig: sandboxKubeConfig(api.url),
      logger: silentLogger,
      controller: { readyDelayMs: 200 },
    });
    try {
      await eventually('the pod Ready on the server', () => readyOf(api.pod) === 'True', {
        timeoutMs: 5_000,
        intervalMs: 50,
      });
      // And it stays so: once the held write has landed and been answered, the pod is Ready (again).
      await eventually(
        'the held first write answered, the pod Ready',
        () => api.heldWrite.answered && readyOf(api.pod) === 'True',
        {
          timeoutMs: 5_000,
          intervalMs: 50,
        },
      );
      expect(api.applied.at(-1)).toBe('True');
    } finally {
      kubelet.stop();
      await api.stop();
    }
  });
});
