// withRolloutReferences: the kustomization's text with Rollgate's configuration listed, everything else as the user wrote it.
import { describe, expect, it } from 'vitest';
import {
  ROLLOUT_REFERENCES_FILE_NAME as FILE,
  withRolloutReferences,
} from '../../../../src/render/kustomize/rollout-references.ts';

describe('withRolloutReferences', () => {
  it.each([
    {
      name: 'adds the list when there is none, after the rest',
      given: '# staging\nresources: [../../base]\nnamePrefix: staging-\n',
      want: `# staging\nresources: [../../base]\nnamePrefix: staging-\nconfigurations:\n  - ${FILE}\n`,
    },
    {
      name: 'appends to a block list, keeping its entries and comments',
      given: 'configurations:\n  - mine.yaml # for the Widget CRD\nresources:\n  - a.yaml\n',
      want: `configurations:\n  - mine.yaml # for the Widget CRD\n  - ${FILE}\nresources:\n  - a.yaml\n`,
    },
    {
      name: 'appends to a flow list',
      given: 'configurations: [mine.yaml]\n',
      want: `configurations: [mine.yaml, ${FILE}]\n`,
    },
    {
      name: 'fills an empty configurations:',
      given: 'configurations:\nresources: [a.yaml]\n',
      want: `configurations:\n  - ${FILE}\nresources: [a.yaml]\n`,
    },
    {
      name: 'keeps a Component a Component',
      given: 'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n',
      want: `apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nconfigurations:\n  - ${FILE}\n`,
    },
    {
      name: 'keeps long lines and quoted strings as written',
      given: `patches:\n  - patch: '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "registry.example/web:2.0.0-with-a-rather-long-tag"}]'\n`,
      want: `patches:\n  - patch: '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "registry.example/web:2.0.0-with-a-rather-long-tag"}]'\nconfigurations:\n  - ${FILE}\n`,
    },
  ])('$name', ({ given, want }) => {
    expect(withRolloutReferences(given)).toBe(want);
  });

  it('lists the file once, however often it runs', () => {
    const once = withRolloutReferences('resources: [a.yaml]\n');
    expect(withRolloutReferences(once)).toBe(once);
    expect(once.split(FILE)).toHaveLength(2);
  });

  it.each([
    { name: 'invalid YAML', given: 'resources: [a.yaml\n' },
    { name: 'a list, not a mapping', given: '- a.yaml\n' },
    { name: 'two documents', given: 'resources: [a.yaml]\n---\nresources: [b.yaml]\n' },
    { name: 'duplicate keys', given: 'resources: [a.yaml]\nresources: [b.yaml]\n' },
    { name: 'configurations: that is not a list', given: 'configurations: mine.yaml\n' },
    { name: 'an empty file', given: '' },
  ])('returns $name unchanged, for kustomize to report', ({ given }) => {
    expect(withRolloutReferences(given)).toBe(given);
  });
});
