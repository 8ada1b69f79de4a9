// Reads of the sources' state ConfigMap against the sandbox: polls may share one recent read, a sync never.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import { syncedStatus } from '../../../src/sync/source-status.ts';

let sandbox: Sandbox;
let clients: KubeClients;
let gets: number;
let nowMs: number;

beforeEach(async () => {
  sandbox = await startSandbox();
  const real = createKubeClients(sandbox.kubeConfig);
  gets = 0;
  nowMs = 0;
  // Counts the GETs of the state ConfigMap that reach the API server.
  const core = new Proxy(real.core, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property !== 'readNamespacedConfigMap' || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        gets += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  clients = { ...real, core };
});

afterEach(async () => {
  await sandbox.stop();
});

const status = (commit: string) =>
  syncedStatus({
    commit,
    attemptAt: '2026-01-01T00:00:00Z',
    syncedAt: '2026-01-01T00:00:01Z',
    written: 1,
    pruned: 0,
    problems: [],
    pending: [],
  });

describe('ConfigMapSourceStateStore reads', () => {
  it('lets polls of many sources share one read within the age they accept, and reads again after it', async () => {
    const store = new ConfigMapSourceStateStore(clients, 'rollgate-system', () => nowMs);
    for (let i = 0; i < 50; i++) await store.setSynced(`s-${i}`, `c-${i}`, status(`c-${i}`));
    gets = 0;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.readSource(`s-${i}`, { maxAgeMs: 1000 })),
    );
    expect(answers.map((a) => a.commit)).toEqual(Array.from({ length: 50 }, (_, i) => `c-${i}`));
    expect(gets).toBe(1);
    nowMs += 1001;
    await store.readSource('s-0', { maxAgeMs: 1000 });
    expect(gets).toBe(2);
  });

  it('answers a read without an age, and any read after a write, from the API server', async () => {
    const store = new ConfigMapSourceStateStore(clients, 'rollgate-system', () => nowMs);
    await store.setSynced('apps', 'c-1', status('c-1'));
    expect((await store.readSource('apps', { maxAgeMs: 1000 })).commit).toBe('c-1');
    await store.setSynced('apps', 'c-2', status('c-2'));
    // Same instant: the write dropped the kept answer.
    expect((await store.readSource('apps', { maxAgeMs: 1000 })).commit).toBe('c-2');
    gets = 0;
    await store.readSource('apps');
    await store.readSource('apps');
    expect(gets).toBe(2);
  });
});
