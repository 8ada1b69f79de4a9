import { describe, expect, it } from 'vitest';
import { formatInventory, inventoryKey, parseInventory } from '../../../src/sync/source-inventory.ts';

describe('the inventory', () => {
  it('names an object by group, kind, namespace and name, not by version', () => {
    expect(inventoryKey({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'web' })).toBe(
      '/ConfigMap/team-a/web',
    );
    expect(inventoryKey({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'a', name: 'w' })).toBe(
      inventoryKey({ apiVersion: 'apps/v1beta2', kind: 'Deployment', namespace: 'a', name: 'w' }),
    );
    expect(
      inventoryKey({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'x.y' }),
    ).toBe('apiextensions.k8s.io/CustomResourceDefinition//x.y');
  });

  it('is stored sorted and without repeats, and reads back; a state without one stays without one', () => {
    const text = formatInventory(['/ConfigMap/a/b', '/ConfigMap/a/a', '/ConfigMap/a/b']);
    expect(text).toBe('/ConfigMap/a/a\n/ConfigMap/a/b');
    expect(parseInventory(text)).toEqual(['/ConfigMap/a/a', '/ConfigMap/a/b']);
    expect(parseInventory(formatInventory([]))).toEqual([]);
    expect(parseInventory(undefined)).toBeUndefined();
  });
});
