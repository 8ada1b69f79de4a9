// The store's indexes (namespace, label, owner, uid) answer what a scan of every object would, through
// creates, label and owner changes, and deletes.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';
import { ResourceRegistry } from '../../../src/sandbox/resources/resource-registry.ts';
import { parseLabelSelector } from '../../../src/sandbox/selectors/label-selector.ts';
import { ObjectStore, type StoredObject } from '../../../src/sandbox/store/object-store.ts';

function fixture(): { store: ObjectStore; registry: ResourceRegistry } {
  const store = new ObjectStore({ clock: new ManualClock(), random: new SeededRandom(3) });
  const registry = new ResourceRegistry();
  const ns = registry.builtIn('', 'Namespace');
  for (const name of ['a', 'b'])
    store.create(ns, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, '');
  return { store, registry };
}

function configMap(name: string, labels: Record<string, string>, owner?: string): StoredObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      labels,
      ...(owner
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner }] }
        : {}),
    },
  };
}

const names = (objects: StoredObject[]): string[] =>
  objects.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);

describe('object store indexes', () => {
  it('lists by namespace and by label equalities exactly what filtering every object gives', () => {
    const { store, registry } = fixture();
    const cm = registry.builtIn('', 'ConfigMap');
    const secret = registry.builtIn('', 'Secret');
    for (const ns of ['a', 'b'])
      for (let i = 0; i < 6; i++)
        store.create(cm, configMap(`cm-${i}`, { app: `web-${i % 3}`, tier: i % 2 ? 'x' : 'y' }), ns);
    // Another kind with the same labels must not leak into a ConfigMap list.
    store.create(secret, { ...configMap('s', { app: 'web-0' }), kind: 'Secret' }, 'a');
    const app0 = (o: StoredObject): boolean => o.metadata.labels?.app === 'web-0';
    const app0y = (o: StoredObject): boolean => app0(o) && o.metadata.labels?.tier === 'y';

    expect(names(store.list(cm, 'a', app0, { app: 'web-0' }))).toEqual(names(store.list(cm, 'a', app0)));
    expect(names(store.list(cm, 'a', app0, { app: 'web-0' }))).toEqual(['a/cm-0', 'a/cm-3']);
    expect(names(store.list(cm, undefined, app0y, { app: 'web-0', tier: 'y' }))).toEqual([
      'a/cm-0',
      'b/cm-0',
    ]);
    expect(names(store.list(cm, 'b'))).toEqual(names(store.list(cm)).filter((n) => n.startsWith('b/')));
    expect(store.list(cm, 'a', undefined, { app: 'absent' })).toEqual([]);
  });

  it("lists by a label selector's equalities the same objects as by the selector alone", () => {
    const { store, registry } = fixture();
    const cm = registry.builtIn('', 'ConfigMap');
    for (let i = 0; i < 8; i++)
      store.create(
        cm,
        configMap(`cm-${i}`, { app: `web-${i % 2}`, tier: `t${i % 4}`, ...(i === 3 ? { canary: '' } : {}) }),
        'a',
      );
    for (const text of [
      'app=web-1',
      'app=web-1,tier!=t1',
      'app==web-1,tier in (t1,t3)',
      'app=web-1,canary',
      'canary=',
      'tier notin (t0)',
      'app=web-1,app=web-0',
    ]) {
      const selector = parseLabelSelector(text);
      const matches = (o: StoredObject): boolean => selector.matches(o.metadata.labels ?? {});
      expect(names(store.list(cm, 'a', matches, selector.equalities)), text).toEqual(
        names(store.list(cm, 'a', matches)),
      );
    }
    expect(parseLabelSelector('app=web,tier!=x,env in (a),!gone').equalities).toEqual({ app: 'web' });
    expect(names(store.list(cm, 'a', undefined, parseLabelSelector('canary=').equalities))).toEqual([
      'a/cm-3',
    ]);
  });

  it('follows a label change: the object leaves its old label and is found under the new one', () => {
    const { store, registry } = fixture();
    const cm = registry.builtIn('', 'ConfigMap');
    const created = store.create(cm, configMap('one', { app: 'old' }), 'a');
    store.update(cm, { ...created, metadata: { ...created.metadata, labels: { app: 'new' } } }, 'a');
    expect(store.list(cm, 'a', undefined, { app: 'old' })).toEqual([]);
    expect(names(store.list(cm, 'a', undefined, { app: 'new' }))).toEqual(['a/one']);
  });

  it('finds dependents by owner uid, after an owner change and after a delete', () => {
    const { store, registry } = fixture();
    const cm = registry.builtIn('', 'ConfigMap');
    store.create(cm, configMap('d1', {}, 'owner-1'), 'a');
    const d2 = store.create(cm, configMap('d2', {}, 'owner-1'), 'a');
    expect(names(store.dependentsOf('owner-1').map((d) => d.object)).sort()).toEqual(['a/d1', 'a/d2']);

    const moved = structuredClone(d2);
    moved.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'owner-2' }];
    store.update(cm, moved, 'a');
    expect(names(store.dependentsOf('owner-1').map((d) => d.object))).toEqual(['a/d1']);
    expect(names(store.dependentsOf('owner-2').map((d) => d.object))).toEqual(['a/d2']);

    store.delete(cm, 'a', 'd1');
    expect(store.dependentsOf('owner-1')).toEqual([]);
    expect(store.list(cm, 'a').map((o) => o.metadata.name)).toEqual(['d2']);
  });

  it('finds an object by uid until it is deleted, and lists a namespace across kinds', () => {
    const { store, registry } = fixture();
    const cm = registry.builtIn('', 'ConfigMap');
    const secret = registry.builtIn('', 'Secret');
    const one = store.create(cm, configMap('one', {}), 'a');
    store.create(secret, { ...configMap('s', {}), kind: 'Secret' }, 'a');
    store.create(cm, configMap('other', {}), 'b');
    const uid = one.metadata.uid ?? '';
    expect(store.byUid(uid)?.object.metadata.name).toBe('one');
    expect(store.byUid(uid)?.typeKey).toBe('/ConfigMap');
    expect(
      store
        .inNamespace('a')
        .map((e) => `${e.typeKey} ${e.object.metadata.name ?? ''}`)
        .sort(),
    ).toEqual(['/ConfigMap one', '/Secret s']);

    store.delete(cm, 'a', 'one');
    expect(store.byUid(uid)).toBeUndefined();
    expect(store.hasUid(uid)).toBe(false);
    expect(store.inNamespace('a').map((e) => e.object.metadata.name)).toEqual(['s']);
  });

  it('replays only the events after a resourceVersion', () => {
    const { store, registry } = fixture();
    const cm = registry.builtIn('', 'ConfigMap');
    const first = store.create(cm, configMap('one', {}), 'a');
    store.create(cm, configMap('two', {}), 'a');
    store.create(cm, configMap('three', {}), 'a');
    const after = store.eventsSince(Number(first.metadata.resourceVersion));
    expect(after?.map((e) => e.object.metadata.name)).toEqual(['two', 'three']);
    expect(store.eventsSince(store.resourceVersion)).toEqual([]);
  });
});
