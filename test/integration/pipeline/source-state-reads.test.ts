// Reads of the sources' state ConfigMaps against the sandbox: polls may share one recent list, a sync never.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import { syncedStatus } from '../../../src/sync/source-status.ts';

let sandbox: Sandbox;
let clients: KubeClients;
let reads: { get: number; list: number };
let nowMs: number;

beforeEach(async () => {
  sandbox = await startSandbox();
  const real = createKubeClients(sandbox.kubeConfig);
  reads = { get: 0, list: 0 };
  nowMs = 0;
  // Counts the ConfigMap GETs and lists that reach the API server.
  const counted = { readNamespacedConfigMap: 'get', listNamespacedConfigMap: 'list' } as const;
  const core = new Proxy(real.core, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      const kind = counted[property as keyof typeof counted] as 'get' | 'list' | undefined;
      if (kind === undefined || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        reads[kind] += 1;
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
  it('lets polls of many sources share one list within the age they accept, and lists again after it', async () => {
    const store = new ConfigMapSourceStateStore(clients, 'rollgate-system', () => nowMs);
    for (let i = 0; i < 50; i++) await store.setSynced(`s-${i}`, `c-${i}`, status(`c-${i}`));
    reads = { get: 0, list: 0 };
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.readSource(`s-${i}`, { maxAgeMs: 1000 })),
    );
    expect(answers.map((a) => a.commit)).toEqual(Array.from({ length: 50 }, (_, i) => `c-${i}`));
    expect(reads).toEqual({ get: 0, list: 1 });
    nowMs += 1001;
    await store.readSource('s-0', { maxAgeMs: 1000 });
    expect(reads).toEqual({ get: 0, list: 2 });
  });

  it('answers a read without an age from the API server, and a read after its own write with that write', async () => {
    const store = new ConfigMapSourceStateStore(clients, 'rollgate-system', () => nowMs);
    await store.setSynced('apps', 'c-1', status('c-1'));
    expect((await store.readSource('apps', { maxAgeMs: 1000 })).commit).toBe('c-1');
    await store.setSynced('apps', 'c-2', status('c-2'));
    // Same instant: the write reached the kept answer.
    expect((await store.readSource('apps', { maxAgeMs: 1000 })).commit).toBe('c-2');
    // Another process's write is seen by any read without an age.
    const other = new ConfigMapSourceStateStore(clients, 'rollgate-system');
    await other.setSynced('apps', 'c-3', status('c-3'));
    reads = { get: 0, list: 0 };
    expect((await store.readSource('apps')).commit).toBe('c-3');
    expect(await store.get('apps')).toBe('c-3');
    expect(reads).toEqual({ get: 2, list: 0 });
  });

  it('lists every source in pages, past the size one ConfigMap could hold', async () => {
    const store = new ConfigMapSourceStateStore(clients, 'rollgate-system');
    // 1,200 sources: more than two pages of 500; each status alone is ~300 bytes.
    const names = Array.from({ length: 1200 }, (_, i) => `s-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 50)
      await Promise.all(names.slice(i, i + 50).map((n) => store.setSynced(n, `c-${n}`, status(`c-${n}`))));
    reads = { get: 0, list: 0 };
    const all = await new ConfigMapSourceStateStore(clients, 'rollgate-system').readAll();
    expect(all.size).toBe(1200);
    expect(all.get('s-1199')).toEqual({ commit: 'c-s-1199', status: status('c-s-1199') });
    expect(reads.list).toBe(3);
  });
});
