// Reading a kustomization's inputs and refusing, with file and line, what Rollgate never renders.
import { describe, expect, it } from 'vitest';
import { readKustomizationFile } from '../../../src/render/kustomize/kustomization-file.ts';
import { preflightReference, remoteForm } from '../../../src/render/kustomize/kustomization-preflight.ts';

const FILE = 'apps/web/overlays/staging/kustomization.yaml';
const DIR = 'apps/web/overlays/staging';

describe('readKustomizationFile', () => {
  it('lists every path a kustomization names, with its field and line; inline patches name none', () => {
    const text = [
      'resources:', //                                  1
      '  - ../../base', //                              2
      '  - extra.yaml', //                              3
      'components: [../../components/tls]', //          4
      'patches:', //                                    5
      '  - path: replicas.yaml', //                     6
      '  - patch: |-', //                               7
      '      - op: replace', //                         8
      '        path: /spec/replicas', //                9
      '        value: 3', //                            10
      'patchesStrategicMerge: [smp.yaml]', //           11
      'patchesJson6902:', //                            12
      '  - target: {kind: Rollout, name: web}', //      13
      '    path: json.yaml', //                         14
      'configMapGenerator:', //                         15
      '  - name: web-config', //                        16
      '    files: [app.properties, key=other.txt]', //  17
      '    envs: [web.env]', //                         18
      'secretGenerator:', //                            19
      '  - name: creds', //                             20
      '    env: creds.env', //                          21
      'configurations: [names.yaml]', //                22
      'crds: [crd.json]', //                            23
      'replacements:', //                               24
      '  - path: replacement.yaml', //                  25
      'openapi:', //                                    26
      '  path: schema.json', //                         27
      'transformers: [labels.yaml]', //                 28
      'generators: [../gen]', //                        29
      'validators: [check.yaml]', //                    30
    ].join('\n');
    const read = readKustomizationFile(FILE, text);
    expect(read.problems).toEqual([]);
    expect(read.references.map((r) => `${r.line} ${r.field} ${r.path} ${r.kind}`)).toEqual([
      '2 resources ../../base entry',
      '3 resources extra.yaml entry',
      '4 components ../../components/tls entry',
      '6 patches.path replicas.yaml file',
      '11 patchesStrategicMerge smp.yaml file',
      '14 patchesJson6902.path json.yaml file',
      '17 configMapGenerator.files app.properties file',
      '17 configMapGenerator.files other.txt file',
      '18 configMapGenerator.envs web.env file',
      '21 secretGenerator.env creds.env file',
      '22 configurations names.yaml file',
      '23 crds crd.json file',
      '25 replacements.path replacement.yaml file',
      '27 openapi.path schema.json file',
      '28 transformers labels.yaml entry',
      '29 generators ../gen entry',
      '30 validators check.yaml entry',
    ]);
  });

  it('refuses Helm inflation at the line of its key', () => {
    const read = readKustomizationFile(
      FILE,
      'resources: [a.yaml]\nhelmCharts:\n  - name: web\n    repo: https://charts.example\nhelmGlobals: {}\n',
    );
    expect(read.problems.map((p) => `${p.file}:${p.line} ${p.message.split(':')[0] ?? ''}`)).toEqual([
      `${FILE}:2 helmCharts`,
      `${FILE}:5 helmGlobals`,
    ]);
    expect(read.problems[0]?.message).toContain('does not inflate Helm charts');
  });

  it('invalid YAML, or a kustomization that is not a mapping, is a problem with its line', () => {
    expect(readKustomizationFile(FILE, 'resources:\n  - a.yaml\n bad: [\n').problems).toEqual([
      expect.objectContaining({ file: FILE, line: 3, message: expect.stringMatching(/^invalid YAML/) }),
    ]);
    expect(readKustomizationFile(FILE, '- a.yaml\n').problems).toEqual([
      { file: FILE, line: 1, message: 'a kustomization must be a mapping' },
    ]);
  });
});

describe('preflightReference', () => {
  const at = (path: string, line = 7) =>
    preflightReference(FILE, DIR, { field: 'resources', path, line, kind: 'entry' });

  it.each([
    'https://github.com/example/base//web?ref=v1',
    'github.com/example/base/web?ref=v1',
    'git::https://example.com/base.git',
    'git@github.com:example/base.git',
    'ssh://git@example.com/base.git',
    'example.com/base?ref=main',
  ])('%s is remote: a problem at the kustomization file and line', (path) => {
    expect(remoteForm(path)).toBeDefined();
    expect(at(path)).toEqual({
      problem: {
        file: FILE,
        line: 7,
        message: expect.stringMatching(
          /^resources: .* Rollgate renders only what is in the source's repository/,
        ),
      },
    });
  });

  it('an absolute path and a path leaving the repository are problems; relative ones resolve', () => {
    expect(at('/etc/passwd')).toEqual({
      problem: { file: FILE, line: 7, message: expect.stringContaining('is an absolute path') },
    });
    expect(at('../../../../../etc')).toEqual({
      problem: { file: FILE, line: 7, message: 'resources: ../../../../../etc leaves the repository' },
    });
    expect(at('../../base')).toEqual({ path: 'apps/web/base' });
    expect(at('./patch.yaml')).toEqual({ path: `${DIR}/patch.yaml` });
    expect(remoteForm('base.yaml')).toBeUndefined();
  });
});
