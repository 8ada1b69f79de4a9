// Sandbox.subscribe: a bench or test hears every change the store makes, of one kind when it asks, in order,
// until it unsubscribes (how `npm run bench -- scale` follows 10,000 Rollouts without a watch).
import { AppsV1Api } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';

let sandbox: Sandbox;

beforeEach(async () => {
  sandbox = await startSandbox({ clock: new ManualClock(Date.UTC(2026, 0, 1)), readyDelayMs: 1000 });
});
afterEach(async () => {
  await sandbox.stop();
});

describe('Sandbox.subscribe', () => {
  it("tells a kind's changes as the store makes them, the controllers' included, until unsubscribed", async () => {
    const seen: string[] = [];
    const unsubscribe = sandbox.subscribe(({ type, object }) => {
      const status = object.status as { readyReplicas?: number } | undefined;
      seen.push(`${type} ${object.metadata.name ?? ''} ready=${status?.readyReplicas ?? 0}`);
    }, 'apps/ReplicaSet');
    const apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);
    await apps.createNamespacedReplicaSet({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
          },
        },
      },
    });
    // Its pod (another kind) is created on the way: not told to a ReplicaSet listener.
    await sandbox.advance(1000);
    expect(seen[0]).toBe('ADDED web ready=0');
    expect(seen.at(-1)).toBe('MODIFIED web ready=1');
    expect(seen.every((line) => line.includes(' web '))).toBe(true);

    unsubscribe();
    const told = seen.length;
    await apps.deleteNamespacedReplicaSet({ namespace: 'default', name: 'web' });
    await sandbox.settle();
    expect(seen).toHaveLength(told);
  });
});
