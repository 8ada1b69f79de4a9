// The -o formats every get and list verb shares: kubectl's names, Lists and `kind.group/name`.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { outputOption } from '../../../src/cli/output-format.ts';
import { formatObject, formatObjectList, resourceName } from '../../../src/cli/print-objects.ts';

const rollout = {
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'Rollout',
  metadata: {
    name: 'web',
    managedFields: [{ manager: 'kubectl' }],
    creationTimestamp: '2026-01-02T03:04:05Z',
  },
  spec: { replicas: 2 },
};
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1' } };

describe('output formats', () => {
  it('names an object as kubectl -o name does: kind.group/name, the core group without one', () => {
    expect(resourceName(rollout)).toBe('rollout.rollgate.dev/web');
    expect(resourceName(pod)).toBe('pod/web-1');
    expect(formatObjectList([rollout, pod], 'name')).toBe('rollout.rollgate.dev/web\npod/web-1\n');
  });

  it('prints a list as a kubectl List, keys sorted, managedFields left out unless asked', () => {
    const list = JSON.parse(formatObjectList([rollout], 'json')) as Record<string, unknown>;
    expect(Object.keys(list)).toEqual(['apiVersion', 'items', 'kind', 'metadata']);
    expect(list).toEqual({
      apiVersion: 'v1',
      kind: 'List',
      metadata: { resourceVersion: '' },
      items: [{ ...rollout, metadata: { name: 'web', creationTimestamp: '2026-01-02T03:04:05Z' } }],
    });
    expect(parse(formatObject(rollout, 'yaml', { showManagedFields: true }))).toEqual(rollout);
  });

  it('writes YAML a YAML 1.1 reader (kubectl, Go) reads back as the same strings', () => {
    const text = formatObject({ ...rollout, data: { flag: 'yes', mode: '0755' } } as never, 'yaml');
    expect(text).toContain('creationTimestamp: "2026-01-02T03:04:05Z"');
    expect(text).toContain('flag: "yes"');
    expect(text).toContain('mode: "0755"');
  });

  it('offers kubectl formats then the verb’s own, text by default', () => {
    const option = outputOption([{ name: 'view-json', help: 'the view' }]);
    expect(option.argChoices).toEqual(['text', 'wide', 'json', 'yaml', 'name', 'view-json']);
    expect(option.defaultValue).toBe('text');
  });
});
