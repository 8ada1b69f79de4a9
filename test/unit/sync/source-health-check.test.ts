// A source's health check over its inventory: one list per kind and namespace, statusless kinds not read,
// a list refused by RBAC read object by object, the health written only when it changed; and when a poll
// looks at all.
import { describe, expect, it } from 'vitest';
import type { LiveObject } from '../../../src/health/object-health.ts';
import { KubeForbiddenError } from '../../../src/kube/errors.ts';
import type { LiveObjectReader } from '../../../src/sync/live-object-reader.ts';
import { checkSourceHealth, healthCheckDue } from '../../../src/sync/source-health-check.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';

const C1 = '1'.repeat(40);

const synced: SourceStatus = {
  phase: 'Synced',
  message: 'synced',
  commit: C1,
  lastAttemptAt: 't',
  lastSyncedAt: 't',
};

/** The store's two calls the check makes, over one source's state in memory; counts the writes. */
function memoryState(status: SourceStatus | undefined, inventory: string[]) {
  const state = {
    status,
    writes: 0,
    async readSource() {
      return { ...(state.status ? { status: state.status } : {}), inventory };
    },
    async updateStatus(_source: string, next: (last: SourceStatus | undefined) => SourceStatus | undefined) {
      const written = next(state.status);
      if (written === undefined) return;
      state.status = written;
      state.writes++;
    },
  };
  return state;
}

function deployment(name: string, ready: number): LiveObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'shop', generation: 1 },
    spec: { replicas: 1 },
    status: {
      observedGeneration: 1,
      replicas: 1,
      updatedReplicas: ready,
      availableReplicas: ready,
      readyReplicas: ready,
    },
  };
}

/** A cluster as lists and gets, by `group/Kind/namespace`; records what was asked. */
function cluster(objects: Record<string, LiveObject[] | Error>): LiveObjectReader & { asked: string[] } {
  return {
    asked: [],
    async list(group, kind, namespace) {
      const at = `${group}/${kind}/${namespace ?? ''}`;
      this.asked.push(`list ${at}`);
      const found = objects[at];
      if (found instanceof Error) throw found;
      return found ?? [];
    },
    async get(group, kind, namespace, name) {
      const at = `${group}/${kind}/${namespace ?? ''}`;
      this.asked.push(`get ${at}/${name}`);
      const found = objects[`get ${at}`];
      if (found instanceof Error) throw found;
      return found?.find((o) => (o['metadata'] as { name: string }).name === name);
    },
  };
}

describe('checkSourceHealth', () => {
  it('reads one list per kind and namespace, never the statusless kinds, and names what is not healthy', async () => {
    const state = memoryState(synced, [
      'apps/Deployment/shop/web',
      'apps/Deployment/shop/api',
      'apps/Deployment/other/web',
      '/ConfigMap/shop/settings',
      '/Secret/shop/db-password',
      '/Service/shop/web',
    ]);
    const reader = cluster({
      'apps/Deployment/shop': [deployment('web', 1), deployment('api', 0)],
      'apps/Deployment/other': [deployment('web', 1)],
      '/Service/shop': [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: {} }],
    });
    const health = (await checkSourceHealth({ state, reader }, 'apps'))?.health;
    expect(reader.asked.sort()).toEqual([
      'list /Service/shop',
      'list apps/Deployment/other',
      'list apps/Deployment/shop',
    ]);
    expect(health).toEqual({
      status: 'Progressing',
      message: 'Deployment shop/api: Progressing: 0 of 1 replicas updated',
      commit: C1,
      objects: [
        { key: 'apps/Deployment/shop/api', status: 'Progressing', message: '0 of 1 replicas updated' },
      ],
    });
    expect(state.status?.health).toEqual(health);
  });

  it('an object not in the list is Missing; a kind no longer served too', async () => {
    const state = memoryState(synced, ['apps/Deployment/shop/gone', 'example.com/Widget/shop/w']);
    const reader: LiveObjectReader = {
      list: async (group) => (group === 'example.com' ? undefined : []),
      get: async () => undefined,
    };
    const health = (await checkSourceHealth({ state, reader }, 'apps'))?.health;
    expect(health?.status).toBe('Missing');
    expect(health?.objects?.map((o) => o.status)).toEqual(['Missing', 'Missing']);
  });

  it('reads object by object when RBAC refuses the list; another failed list makes its objects Unknown', async () => {
    const forbidden = new KubeForbiddenError(
      'jobs.batch is forbidden',
      { verb: 'list', kind: 'Job' },
      403,
      'Forbidden',
    );
    const state = memoryState(synced, ['batch/Job/shop/migrate', 'apps/Deployment/shop/web']);
    const reader = cluster({
      'batch/Job/shop': forbidden,
      'get batch/Job/shop': [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: 'migrate' },
          status: { conditions: [{ type: 'Complete', status: 'True' }] },
        },
      ],
      'apps/Deployment/shop': new Error('connection reset'),
    });
    const health = (await checkSourceHealth({ state, reader }, 'apps'))?.health;
    expect(reader.asked).toContain('get batch/Job/shop/migrate');
    expect(health?.objects).toEqual([
      { key: 'apps/Deployment/shop/web', status: 'Unknown', message: 'cannot list: connection reset' },
    ]);
  });

  it('writes the health only when it changed, and nothing before a first sync', async () => {
    const state = memoryState(synced, ['apps/Deployment/shop/web']);
    const reader = cluster({ 'apps/Deployment/shop': [deployment('web', 1)] });
    const first = await checkSourceHealth({ state, reader }, 'apps');
    const second = await checkSourceHealth({ state, reader }, 'apps');
    expect(state.writes).toBe(1);
    expect(first?.previous).toBeUndefined();
    expect(second?.previous).toEqual(first?.health);
    expect(state.status?.health).toEqual({ status: 'Healthy', message: '1 object healthy', commit: C1 });
    const none = memoryState(undefined, []);
    expect(await checkSourceHealth({ state: none, reader }, 'apps')).toBeUndefined();
    expect(none.writes).toBe(0);
  });
});

describe('healthCheckDue', () => {
  const healthy = { ...synced, health: { status: 'Healthy' as const, message: '', commit: C1 } };
  it.each([
    { name: 'never synced', status: undefined, since: undefined, due: false },
    { name: 'synced, never checked', status: synced, since: undefined, due: true },
    {
      name: 'not Healthy: every poll',
      status: { ...synced, health: { ...healthy.health, status: 'Progressing' as const } },
      since: 1,
      due: true,
    },
    {
      name: 'Healthy at an older commit: every poll',
      status: { ...healthy, commit: '2'.repeat(40) },
      since: 1,
      due: true,
    },
    { name: 'Healthy, checked a while ago', status: healthy, since: 1000, due: true },
    { name: 'Healthy, checked just now', status: healthy, since: 999, due: false },
    { name: 'Healthy, not checked by this process', status: healthy, since: undefined, due: true },
  ])('$name → $due', ({ status, since, due }) => {
    expect(healthCheckDue(status, since, 1000)).toBe(due);
  });
});
