// The check that flags a Rollout or analysis template naming a kustomize-generated ConfigMap/Secret by its unsuffixed name.
import { describe, expect, it } from 'vitest';
import { checkGeneratedNameReferences } from '../../../src/manifest/generated-name-references.ts';
import { parseManifests } from '../../../src/manifest/manifest.ts';
import { validateManifests } from '../../../src/manifest/validate.ts';
import { ROLLOUT_YAML } from '../../builders/rollout-manifest.ts';

// ROLLOUT_YAML's container, with an envFrom after its image (line 19: envFrom, 21: the name).
const withEnvFrom = (rollout: string, configMap: string): string =>
  rollout.replace(
    '          image: nginx:1.27\n',
    `          image: nginx:1.27\n          envFrom:\n            - configMapRef:\n                name: ${configMap}\n`,
  );

const configMap = (name: string, namespace = 'apps'): string =>
  `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata: {A: "1"}\n`;

const secret = (name: string): string =>
  `---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n  namespace: apps\nstringData: {token: t}\n`;

/** The flagged references, as `kind/name path (line): message`. */
function flagged(text: string): string[] {
  return checkGeneratedNameReferences(parseManifests(text, 'app.yaml').objects).map(
    ({ object, issue }) => `${object.kind}/${object.name} ${issue.path} (${issue.line}): ${issue.message}`,
  );
}

describe('checkGeneratedNameReferences', () => {
  it('flags a Rollout naming a generated ConfigMap by the name it was generated from, at the field', () => {
    const found = flagged(withEnvFrom(ROLLOUT_YAML, 'web-config') + configMap('web-config-89g4tffbfk'));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /^Rollout\/web spec\.template\.spec\.containers\[0\]\.envFrom\[0\]\.configMapRef\.name \(21\): /,
    );
    expect(found[0]).toContain('names ConfigMap "web-config", which is not among the objects');
    expect(found[0]).toContain('"web-config-89g4tffbfk"');
    expect(found[0]).toContain('kustomize did not rewrite this reference');
  });

  it('flags it when the build also gave every name a prefix and a suffix (the Rollout carries them too)', () => {
    const rollout = withEnvFrom(ROLLOUT_YAML, 'web-config').replace(
      '  name: web\n',
      '  name: staging-web-v2\n',
    );
    const found = flagged(rollout + configMap('staging-web-config-v2-89g4tffbfk'));
    expect(found).toHaveLength(1);
    expect(found[0]).toContain('"staging-web-config-v2-89g4tffbfk"');
  });

  it.each([
    {
      name: 'the reference is the generated name (kustomize rewrote it)',
      reference: 'web-config-89g4tffbfk',
      objects: configMap('web-config-89g4tffbfk'),
    },
    {
      name: 'an object of the unsuffixed name exists too',
      reference: 'web-config',
      objects: configMap('web-config-89g4tffbfk') + configMap('web-config'),
    },
    {
      name: 'the suffix is not a kustomize hash (letters it never writes)',
      reference: 'web-config',
      objects: configMap('web-config-production'),
    },
    {
      name: 'the suffix is a hash of the wrong length',
      reference: 'web-config',
      objects: configMap('web-config-89g4tffb'),
    },
    {
      name: 'the generated ConfigMap is in another namespace',
      reference: 'web-config',
      objects: configMap('web-config-89g4tffbfk', 'other'),
    },
    {
      name: 'the generated name only starts with the reference (another generator)',
      reference: 'web',
      objects: configMap('web-config-89g4tffbfk'),
    },
    {
      name: 'a Secret of that name was generated, not a ConfigMap',
      reference: 'web-config',
      objects: secret('web-config-89g4tffbfk'),
    },
  ])('says nothing when $name', ({ reference, objects }) => {
    expect(flagged(withEnvFrom(ROLLOUT_YAML, reference) + objects)).toEqual([]);
  });

  it('reads every pod-spec field that names a Secret: volumes, init containers, image pull secrets', () => {
    const rollout = ROLLOUT_YAML.replace(
      '      containers:\n',
      [
        '      imagePullSecrets: [{name: pull}]',
        '      volumes: [{name: a, secret: {secretName: files}}]',
        '      initContainers:',
        '        - {name: init, image: busybox, env: [{name: T, valueFrom: {secretKeyRef: {name: token, key: t}}}]}',
        '      containers:',
        '',
      ].join('\n'),
    );
    const found = flagged(
      rollout + secret('pull-5b4fh7t2mk') + secret('files-5b4fh7t2mk') + secret('token-5b4fh7t2mk'),
    );
    expect(found.map((line) => line.split(' (')[0])).toEqual([
      'Rollout/web spec.template.spec.volumes[0].secret.secretName',
      'Rollout/web spec.template.spec.imagePullSecrets[0].name',
      'Rollout/web spec.template.spec.initContainers[0].env[0].valueFrom.secretKeyRef.name',
    ]);
  });

  it('flags an AnalysisTemplate argument read from a generated Secret, on the template', () => {
    const template = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: success-rate
  namespace: apps
spec:
  args:
    - name: token
      valueFrom:
        secretKeyRef: {name: metrics-token, key: token}
  metrics:
    - name: up
      provider: {web: {url: "http://example.test/"}}
`;
    const found = flagged(template + secret('metrics-token-7c9d6hkg2b'));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /^AnalysisTemplate\/success-rate spec\.args\[0\]\.valueFrom\.secretKeyRef\.name \(10\): names Secret "metrics-token"/,
    );
  });

  it('reads Rollouts written in the rollgate.dev group too', () => {
    const rollout = withEnvFrom(ROLLOUT_YAML, 'web-config').replace(
      'argoproj.io/v1alpha1',
      'rollgate.dev/v1alpha1',
    );
    expect(flagged(rollout + configMap('web-config-89g4tffbfk'))).toHaveLength(1);
  });
});

describe('rollgate validate over a directory', () => {
  it('makes the Rollout invalid, at its file and line, with the ConfigMap in another file', () => {
    const report = validateManifests([
      { file: 'base/rollout.yaml', text: withEnvFrom(ROLLOUT_YAML, 'web-config') },
      { file: 'base/config.yaml', text: configMap('web-config-89g4tffbfk') },
    ]);
    expect(report.summary).toEqual({ valid: 0, invalid: 1, skipped: 1 });
    const [rollout] = report.objects;
    expect(rollout?.file).toBe('base/rollout.yaml');
    expect(rollout?.errors.map((error) => [error.line, error.col, error.path])).toEqual([
      [21, 17, 'spec.template.spec.containers[0].envFrom[0].configMapRef.name'],
    ]);
  });

  it('keeps the Rollout valid once the reference names the generated ConfigMap', () => {
    const report = validateManifests([
      {
        file: 'rendered.yaml',
        text: withEnvFrom(ROLLOUT_YAML, 'web-config-89g4tffbfk') + configMap('web-config-89g4tffbfk'),
      },
    ]);
    expect(report.summary).toEqual({ valid: 1, invalid: 0, skipped: 1 });
  });
});
