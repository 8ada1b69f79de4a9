// kubernetes.clusterName, clusters and clusterSecrets: defaults, and each bad value refused naming its key.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';
import { clusterSecretsNamespace } from '../../../src/config/schema.ts';

function tempFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rollgate-config-')), 'rollgate.yaml');
  writeFileSync(file, text);
  return file;
}

function problemsOf(text: string): string[] {
  try {
    loadConfig({ file: tempFile(text), env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('cluster keys', () => {
  it('default to one cluster named in-cluster and no Secrets', () => {
    const config = loadConfig({ env: {} });
    expect(config.kubernetes.clusterName).toBe('in-cluster');
    expect(config.clusters).toEqual([]);
    expect(config.clusterSecrets).toEqual({ enabled: false });
    expect(clusterSecretsNamespace(config)).toBe('rollgate-system');
  });

  it('read contexts and the Secrets namespace', () => {
    const config = loadConfig({
      file: tempFile(
        'kubernetes:\n  clusterName: mgmt\nclusters:\n  - { name: eu-west-1, context: eu }\n  - { name: us-east-1, context: us, kubeconfig: /k }\nclusterSecrets: { enabled: true, namespace: argocd }\n',
      ),
      env: {},
    });
    expect(config.clusters).toEqual([
      { name: 'eu-west-1', context: 'eu' },
      { name: 'us-east-1', context: 'us', kubeconfig: '/k' },
    ]);
    expect(clusterSecretsNamespace(config)).toBe('argocd');
  });

  it.each([
    [
      'a name that is no DNS label',
      'clusters:\n  - { name: EU_West, context: eu }\n',
      /^clusters\[0\]\.name: must be a DNS-1123 label/,
    ],
    [
      'a name used twice',
      'clusters:\n  - { name: eu, context: a }\n  - { name: eu, context: b }\n',
      /^clusters\[1\]\.name: duplicate cluster name "eu" \(also clusters\[0\]\)/,
    ],
    [
      'the local name',
      'clusters:\n  - { name: in-cluster, context: a }\n',
      /clusters.*0.*name: "in-cluster" is the local cluster's name/,
    ],
    ['no context', 'clusters:\n  - { name: eu }\n', /^clusters\[0\]\.context/],
    ['an unknown field', 'clusters:\n  - { name: eu, context: a, server: x }\n', /^clusters\[0\].*server/],
    [
      'a bad local name',
      'kubernetes:\n  clusterName: In Cluster\n',
      /^kubernetes\.clusterName: must be a DNS-1123 label/,
    ],
    [
      'a bad Secrets namespace',
      'clusterSecrets: { namespace: "Argo CD" }\n',
      /^clusterSecrets\.namespace: must be a namespace name/,
    ],
  ])('refuse %s, naming the key', (_name, text, problem) => {
    expect(problemsOf(text).some((p) => problem.test(p))).toBe(true);
  });
});
