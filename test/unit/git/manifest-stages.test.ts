// The first part of a large commit: its Rollouts and every file that may define what they wait for.
import { describe, expect, it } from 'vitest';
import { compareManifests } from '../../../src/git/manifest-diff.ts';
import { specManifestParser } from '../../../src/git/manifest-parser.ts';
import { hasToken, parseFiles, splitFirstPart, type FileTexts } from '../../../src/git/manifest-stages.ts';
import { needsOfObject } from '../../../src/sync/apply-plan.ts';

const rule = {
  kinds: ['Rollout'],
  needsOf: (object: Parameters<typeof needsOfObject>[0]) =>
    needsOfObject(object, { defaultNamespace: 'apps' }),
};

function cm(name: string, data = 'v: "1"', namespace?: string): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ''}data:\n  ${data}\n`;
}

function rollout(name: string, configMap: string): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: ${name}
spec:
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      volumes: [{ name: conf, configMap: { name: ${configMap} } }]
      containers: [{ name: app, image: "${name}:1" }]
  strategy: { canary: { steps: [{ setWeight: 50 }] } }
`;
}

const added = (path: string, text: string): FileTexts => ({ path, after: text });

function many(n: number): FileTexts[] {
  return Array.from({ length: n }, (_, i) =>
    added(`many/cm-${String(i).padStart(4, '0')}.yaml`, cm(`unrelated-${i}`, `i: "${i}"`)),
  );
}

const paths = (files: ReadonlyArray<{ path: string }>): string[] => files.map((f) => f.path);

describe('splitFirstPart', () => {
  it('puts a Rollout and the ConfigMap it mounts first, and leaves 1,000 unrelated ConfigMaps for later', () => {
    const files = [
      ...many(1000),
      added('web.yaml', rollout('web', 'web-config')),
      added('web-config.yaml', cm('web-config')),
    ];
    const split = splitFirstPart(files, specManifestParser, rule);
    expect(paths(split.first)).toEqual(['web.yaml', 'web-config.yaml']);
    expect(split.rest).toHaveLength(1000);
    expect(compareManifests(split.first).changes.map((c) => c.key)).toEqual([
      'ConfigMap//web-config',
      'Rollout//web',
    ]);
  });

  it('takes what the first part needs from anywhere: its Namespace, a CRD of its group, and what those files define', () => {
    const files = [
      ...many(100),
      added('ns.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n'),
      added(
        'crd.yaml',
        'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: rollouts.argoproj.io\nspec:\n  group: argoproj.io\n  names: { kind: Rollout, plural: rollouts }\n',
      ),
      added('web.yaml', rollout('web', 'web-config')),
      // Defines the mounted ConfigMap beside another object: both are compared in the first part.
      added('shared.yaml', `${cm('web-config')}---\n${cm('other')}`),
      // The other object's old home: its move is seen within the first part, not as removal plus addition.
      { path: 'old/other.yaml', before: cm('other', 'v: "0"') },
    ];
    const split = splitFirstPart(files, specManifestParser, rule);
    expect(paths(split.first).sort()).toEqual([
      'crd.yaml',
      'ns.yaml',
      'old/other.yaml',
      'shared.yaml',
      'web.yaml',
    ]);
    const first = compareManifests(split.first);
    expect(first.changes.find((c) => c.key === 'ConfigMap//other')).toMatchObject({
      change: 'changed',
      previousFile: 'old/other.yaml',
    });
  });

  it('keeps a name written with escapes, or a second definition of the same key, in the first part', () => {
    const files = [
      ...many(100),
      added('web.yaml', rollout('web', 'web-config')),
      added('escaped.yaml', cm('"web-\\x63onfig"')),
      added('dup.yaml', rollout('web', 'web-config')),
    ];
    const split = splitFirstPart(files, specManifestParser, rule);
    expect(paths(split.first).sort()).toEqual(['dup.yaml', 'escaped.yaml', 'web.yaml']);
    expect(compareManifests(split.first).problems.map((p) => p.message)).toEqual([
      'duplicate object Rollout//web (first defined at web.yaml:1)',
    ]);
  });

  it('does not split a commit without a Rollout, nor one whose Rollouts need most of it', async () => {
    expect(splitFirstPart(many(10), specManifestParser, rule).first).toHaveLength(0);
    const mostNeeded = [
      added('web.yaml', rollout('web', 'web-config')),
      ...Array.from({ length: 5 }, (_, i) => added(`cm-${i}.yaml`, cm(`c${i}`, 'who: web-config'))),
    ];
    const split = splitFirstPart(mostNeeded, specManifestParser, rule);
    expect(split.first).toHaveLength(6);
    expect(split.rest).toHaveLength(0);
    expect(await parseFiles([], specManifestParser)).toEqual([]);
  });
});

describe('hasToken', () => {
  it('matches a whole name only', () => {
    expect(hasToken('name: web-config\n', 'web-config')).toBe(true);
    expect(hasToken('name: "web-config"', 'web-config')).toBe(true);
    expect(hasToken('name: web-config-2', 'web-config')).toBe(false);
    expect(hasToken('name: my.web-config', 'web-config')).toBe(false);
    expect(hasToken('i: "1"\nname: unrelated-00001', '1')).toBe(true);
    expect(hasToken('name: unrelated-00001', '1')).toBe(false);
  });
});
