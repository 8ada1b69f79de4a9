// Server-side apply: fieldsV1 ownership, conflicts, force, removal of dropped fields, Update ownership.

import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/sandbox/controllers/index.ts';
import {
  FieldSet,
  formatApplyConflictMessage,
  recordUpdateManagedFields,
  serverSideApply,
  ServerSideApplyError,
} from '../../../src/sandbox/patch/index.ts';

const now = new Date('2026-01-01T00:00:00Z');
const later = new Date('2026-01-01T00:01:00Z');

/** An applied Deployment configuration; `{}` labels means the configuration sets no labels. */
function applied(spec: Record<string, unknown>, labels: Record<string, string> = { app: 'web' }): KubeObject {
  const metadata = { name: 'web', namespace: 'shop', ...(Object.keys(labels).length > 0 ? { labels } : {}) };
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec };
}

const baseSpec = {
  replicas: 2,
  selector: { matchLabels: { app: 'web' } },
  template: {
    metadata: { labels: { app: 'web' } },
    spec: { containers: [{ name: 'app', image: 'app:1', ports: [{ containerPort: 8080 }] }] },
  },
};

/** Applies as the server would on create: the server adds uid/resourceVersion afterwards. */
function create(manager: string, object: KubeObject): KubeObject {
  const result = serverSideApply(undefined, object, { manager, force: false, now });
  expect(result.conflicts).toEqual([]);
  return { ...result.object, metadata: { ...result.object.metadata, uid: 'uid-1', resourceVersion: '7' } };
}

function entry(object: KubeObject, manager: string): Record<string, unknown> | undefined {
  return object.metadata.managedFields?.find((field) => field.manager === manager) as
    Record<string, unknown> | undefined;
}

function owned(object: KubeObject, manager: string): string[] {
  const found = object.metadata.managedFields?.find((field) => field.manager === manager);
  return found === undefined
    ? []
    : FieldSet.fromFieldsV1(found.fieldsV1)
        .list()
        .map((path) => path.join(' '));
}

describe('serverSideApply: ownership in fieldsV1', () => {
  it('records the applier as owner of every applied field, in the format the API server writes', () => {
    const live = create('rollgate', applied(baseSpec));
    expect(live.spec).toEqual(baseSpec);
    expect(live.metadata.name).toBe('web');
    expect(entry(live, 'rollgate')).toEqual({
      manager: 'rollgate',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      time: '2026-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': {
          'f:replicas': {},
          'f:selector': {},
          'f:template': {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
            'f:spec': {
              'f:containers': {
                'k:{"name":"app"}': {
                  '.': {},
                  'f:image': {},
                  'f:name': {},
                  'f:ports': {
                    'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
                  },
                },
              },
            },
          },
        },
      },
    });
  });

  it('re-applying the same configuration changes nothing but the time', () => {
    const live = create('rollgate', applied(baseSpec));
    const again = serverSideApply(live, applied(baseSpec), { manager: 'rollgate', force: false, now: later });
    expect(again.conflicts).toEqual([]);
    expect(again.object.spec).toEqual(live.spec);
    expect(again.object.metadata.uid).toBe('uid-1');
    expect(again.object.metadata.resourceVersion).toBe('7');
    expect(entry(again.object, 'rollgate')?.time).toBe('2026-01-01T00:01:00Z');
    expect(entry(again.object, 'rollgate')?.fieldsV1).toEqual(entry(live, 'rollgate')?.fieldsV1);
  });

  it('a second manager adding its own fields co-exists (keyed list items merge)', () => {
    const live = create('rollgate', applied(baseSpec));
    const sidecar = applied(
      { template: { spec: { containers: [{ name: 'proxy', image: 'proxy:1' }] } } },
      {},
    );
    const result = serverSideApply(live, sidecar, { manager: 'mesh', force: false, now: later });
    expect(result.conflicts).toEqual([]);
    const containers = (result.object.spec?.template as { spec: { containers: Array<{ name: string }> } })
      .spec.containers;
    expect(containers.map((container) => container.name)).toEqual(['app', 'proxy']);
    expect(owned(result.object, 'mesh')).toContain(
      'f:spec f:template f:spec f:containers k:{"name":"proxy"} f:image',
    );
    expect(owned(result.object, 'rollgate')).toContain('f:spec f:replicas');
  });
});

describe('serverSideApply: conflicts and force', () => {
  it('reports a conflict when another manager owns a field with a different value, and changes nothing', () => {
    const live = create('rollgate', applied(baseSpec));
    const result = serverSideApply(live, applied({ replicas: 5 }, {}), {
      manager: 'hpa',
      force: false,
      now: later,
    });
    expect(result.conflicts).toEqual([
      {
        manager: 'rollgate',
        field: '.spec.replicas',
        apiVersion: 'apps/v1',
        operation: 'Apply',
        time: '2026-01-01T00:00:00Z',
        owner: '"rollgate"',
      },
    ]);
    expect(result.object.spec?.replicas).toBe(2);
    expect(formatApplyConflictMessage(result.conflicts)).toBe(
      'Apply failed with 1 conflict: conflict with "rollgate": .spec.replicas',
    );
  });

  it('names keyed list items in conflict fields', () => {
    const live = create('rollgate', applied(baseSpec));
    const other = applied({ template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } }, {});
    const result = serverSideApply(live, other, { manager: 'ci', force: false, now: later });
    expect(result.conflicts.map((conflict) => conflict.field)).toEqual([
      '.spec.template.spec.containers[name="app"].image',
    ]);
  });

  it('applying the same value as the owner shares ownership without conflict', () => {
    const live = create('rollgate', applied(baseSpec));
    const result = serverSideApply(live, applied({ replicas: 2 }, {}), {
      manager: 'hpa',
      force: false,
      now: later,
    });
    expect(result.conflicts).toEqual([]);
    expect(owned(result.object, 'hpa')).toEqual(['f:spec f:replicas']);
    expect(owned(result.object, 'rollgate')).toContain('f:spec f:replicas');
  });

  it('force takes ownership of the conflicting fields', () => {
    const live = create('rollgate', applied(baseSpec));
    const result = serverSideApply(live, applied({ replicas: 5 }, {}), {
      manager: 'hpa',
      force: true,
      now: later,
    });
    expect(result.conflicts).toEqual([]);
    expect(result.object.spec?.replicas).toBe(5);
    expect(owned(result.object, 'hpa')).toEqual(['f:spec f:replicas']);
    expect(owned(result.object, 'rollgate')).not.toContain('f:spec f:replicas');
    expect(owned(result.object, 'rollgate')).toContain('f:spec f:selector');
  });

  it('conflicts with an Update manager (kubectl edit) too', () => {
    const live = create('rollgate', applied(baseSpec));
    const edited = structuredClone(live);
    (edited.spec as { replicas: number }).replicas = 4;
    const afterEdit = recordUpdateManagedFields(live, edited, 'kubectl-edit', later);
    expect(owned(afterEdit, 'kubectl-edit')).toEqual(['f:spec f:replicas']);
    expect(owned(afterEdit, 'rollgate')).not.toContain('f:spec f:replicas');
    const result = serverSideApply(afterEdit, applied(baseSpec), {
      manager: 'rollgate',
      force: false,
      now: later,
    });
    expect(result.conflicts).toMatchObject([
      { manager: 'kubectl-edit', field: '.spec.replicas', apiVersion: 'apps/v1', operation: 'Update' },
    ]);
    expect(formatApplyConflictMessage(result.conflicts)).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1 at 2026-01-01T00:01:00Z: .spec.replicas',
    );
  });

  it('an object without managedFields belongs to before-first-apply', () => {
    const live: KubeObject = {
      ...applied({ replicas: 3 }),
      metadata: { name: 'web', namespace: 'shop', uid: 'u' },
    };
    const result = serverSideApply(live, applied({ replicas: 1 }, {}), {
      manager: 'rollgate',
      force: false,
      now,
    });
    expect(result.conflicts).toMatchObject([
      { manager: 'before-first-apply', field: '.spec.replicas', apiVersion: 'apps/v1', operation: 'Update' },
    ]);
  });

  it('formats several conflicts like the API server, grouped by owner', () => {
    const editor = {
      apiVersion: 'apps/v1',
      operation: 'Update' as const,
      manager: 'kubectl-edit',
      owner: '"kubectl-edit" using apps/v1 at 2026-01-01T00:00:00Z',
    };
    const applier = { apiVersion: 'apps/v1', operation: 'Apply' as const, manager: 'ci', owner: '"ci"' };
    expect(
      formatApplyConflictMessage([
        { ...editor, field: '.spec.replicas' },
        { ...applier, field: '.spec.paused' },
        { ...editor, field: '.spec.minReadySeconds' },
      ]),
    ).toBe(
      'Apply failed with 3 conflicts: conflicts with "ci":\n- .spec.paused\n' +
        'conflicts with "kubectl-edit" using apps/v1 at 2026-01-01T00:00:00Z:\n- .spec.replicas\n- .spec.minReadySeconds',
    );
  });

  it('names the subresource of a status owner', () => {
    const live = create('rollgate', applied(baseSpec));
    const withStatus = serverSideApply(
      live,
      { ...applied({}, {}), status: { replicas: 2 } },
      { manager: 'controller', force: false, now, subresource: 'status' },
    ).object;
    const conflict = serverSideApply(
      withStatus,
      { ...applied({}, {}), status: { replicas: 3 } },
      { manager: 'other', force: false, now, subresource: 'status' },
    ).conflicts;
    expect(conflict.map((entry) => entry.owner)).toEqual(['"controller" with subresource "status"']);
  });
});

describe('serverSideApply: fields dropped from the configuration', () => {
  it('removes fields the applier owned alone and no longer applies', () => {
    const live = create('rollgate', applied(baseSpec, { app: 'web', tier: 'front' }));
    const result = serverSideApply(live, applied(baseSpec), {
      manager: 'rollgate',
      force: false,
      now: later,
    });
    expect(result.object.metadata.labels).toEqual({ app: 'web' });
    expect(owned(result.object, 'rollgate')).not.toContain('f:metadata f:labels f:tier');
  });

  it('keeps a dropped field another manager also owns', () => {
    const live = create('rollgate', applied(baseSpec, { app: 'web', tier: 'front' }));
    const shared = serverSideApply(live, applied({}, { tier: 'front' }), {
      manager: 'team',
      force: false,
      now,
    }).object;
    const result = serverSideApply(shared, applied(baseSpec), {
      manager: 'rollgate',
      force: false,
      now: later,
    });
    expect(result.object.metadata.labels).toEqual({ app: 'web', tier: 'front' });
  });

  it('removes a dropped keyed list item, keeps items others own', () => {
    const twoContainers = structuredClone(baseSpec);
    twoContainers.template.spec.containers.push({ name: 'old', image: 'old:1', ports: [] });
    const live = create('rollgate', applied(twoContainers));
    const withMesh = serverSideApply(
      live,
      applied({ template: { spec: { containers: [{ name: 'proxy', image: 'proxy:1' }] } } }, {}),
      { manager: 'mesh', force: false, now },
    ).object;
    const result = serverSideApply(withMesh, applied(baseSpec), {
      manager: 'rollgate',
      force: false,
      now: later,
    });
    const names = (
      result.object.spec?.template as { spec: { containers: Array<{ name: string }> } }
    ).spec.containers.map((container) => container.name);
    expect(names).toEqual(['app', 'proxy']);
  });

  it('does not remove fields another manager set through Update', () => {
    const live = create('rollgate', applied(baseSpec, { app: 'web', tier: 'front' }));
    const edited = structuredClone(live);
    edited.metadata.annotations = { note: 'hi' };
    const afterEdit = recordUpdateManagedFields(live, edited, 'kubectl-annotate', now);
    const result = serverSideApply(afterEdit, applied(baseSpec), {
      manager: 'rollgate',
      force: false,
      now: later,
    });
    expect(result.object.metadata.annotations).toEqual({ note: 'hi' });
  });
});

describe('serverSideApply: status subresource and custom resources', () => {
  it('applying to /status changes only status and records the subresource', () => {
    const live = create('rollgate', applied(baseSpec));
    const statusApply: KubeObject = {
      ...applied({ replicas: 99 }),
      status: { conditions: [{ type: 'Available', status: 'True' }] },
    };
    const result = serverSideApply(live, statusApply, {
      manager: 'controller',
      force: false,
      now,
      subresource: 'status',
    });
    expect(result.conflicts).toEqual([]);
    expect(result.object.spec?.replicas).toBe(2);
    expect(result.object.status).toEqual({ conditions: [{ type: 'Available', status: 'True' }] });
    expect(entry(result.object, 'controller')).toMatchObject({ operation: 'Apply', subresource: 'status' });
    expect(owned(result.object, 'controller')).toContain('f:status f:conditions k:{"type":"Available"}');
  });

  it('custom resource lists are atomic: one owner for the whole list', () => {
    const rollout: KubeObject = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'web', finalizers: ['x'] },
      spec: { strategy: { canary: { steps: [{ setWeight: 20 }, { pause: {} }] } } },
    };
    const live = create('rollgate', rollout);
    expect(owned(live, 'rollgate')).toEqual([
      'f:metadata f:finalizers v:"x"',
      'f:spec f:strategy f:canary f:steps',
    ]);
  });
});

describe('recordUpdateManagedFields', () => {
  it('a create records every field for the manager (operation Update)', () => {
    const created = recordUpdateManagedFields(undefined, applied({ replicas: 1 }), 'kubectl-create', now);
    expect(created.metadata.managedFields).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: '2026-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:replicas': {} } },
      },
    ]);
  });

  it('a write that changes nothing adds no entry', () => {
    const live = create('rollgate', applied(baseSpec));
    const same = recordUpdateManagedFields(live, structuredClone(live), 'noop', later);
    expect(same.metadata.managedFields).toEqual(live.metadata.managedFields);
  });

  it('removed fields leave every owner', () => {
    const live = create('rollgate', applied(baseSpec, { app: 'web', tier: 'front' }));
    const edited = structuredClone(live);
    delete edited.metadata.labels?.tier;
    const result = recordUpdateManagedFields(live, edited, 'kubectl-edit', later);
    expect(owned(result, 'rollgate')).not.toContain('f:metadata f:labels f:tier');
    expect(entry(result, 'kubectl-edit')).toBeUndefined();
  });
});

describe('FieldSet', () => {
  it('round-trips fieldsV1', () => {
    const fields = {
      'f:metadata': { 'f:finalizers': { '.': {}, 'v:"a"': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {} } }, 'f:replicas': {} },
    };
    expect(FieldSet.fromFieldsV1(fields).toFieldsV1()).toEqual(fields);
  });
});

describe('serverSideApply: invalid requests', () => {
  it('rejects managedFields in the applied configuration, as the API server does', () => {
    const withFields = applied(baseSpec);
    withFields.metadata.managedFields = [
      { manager: 'x', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: {} },
    ];
    expect(() => serverSideApply(undefined, withFields, { manager: 'rollgate', force: false, now })).toThrow(
      'metadata.managedFields must be nil',
    );
  });

  it('rejects a configuration without apiVersion or kind', () => {
    const noKind = { ...applied(baseSpec), kind: '' };
    expect(() => serverSideApply(undefined, noKind, { manager: 'rollgate', force: false, now })).toThrow(
      ServerSideApplyError,
    );
  });
});

describe('recordUpdateManagedFields: managedFields sent by the client', () => {
  it('[] keeps the stored ownership, [{}] resets it', () => {
    const live = create('rollgate', applied(baseSpec));
    const kept = structuredClone(live);
    kept.metadata.managedFields = [];
    expect(recordUpdateManagedFields(live, kept, 'kubectl-replace', later).metadata.managedFields).toEqual(
      live.metadata.managedFields,
    );
    const reset = structuredClone(live);
    reset.metadata.managedFields = [{} as never];
    expect(
      recordUpdateManagedFields(live, reset, 'kubectl-replace', later).metadata.managedFields,
    ).toBeUndefined();
  });
});

describe('serverSideApply: inputs stay untouched', () => {
  it('does not mutate live or applied, even when it removes dropped fields', () => {
    const live = create('rollgate', applied(baseSpec, { app: 'web', tier: 'front' }));
    const snapshot = structuredClone(live);
    const config = applied({ replicas: 2 }, {});
    const configSnapshot = structuredClone(config);
    const result = serverSideApply(live, config, { manager: 'rollgate', force: false, now: later });
    expect(result.object.metadata.labels).toBeUndefined();
    expect(result.object.spec?.template).toBeUndefined();
    expect(live).toEqual(snapshot);
    expect(config).toEqual(configSnapshot);
  });
});
