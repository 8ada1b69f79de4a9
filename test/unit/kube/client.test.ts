// Kubeconfig lookup precedence: --kubeconfig, KUBECONFIG, ~/.kube/config, in-cluster.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  connectKube,
  currentNamespace,
  KubeContextNotFoundError,
  loadKubeConfig,
} from '../../../src/kube/client.ts';

function kubeconfigYaml(server: string, namespace?: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: c`,
    `  cluster: { server: "${server}" }`,
    'users:',
    '- name: u',
    '  user: { token: abc }',
    'contexts:',
    '- name: ctx',
    `  context: { cluster: c, user: u${namespace ? `, namespace: ${namespace}` : ''} }`,
    'current-context: ctx',
    '',
  ].join('\n');
}

describe('loadKubeConfig', () => {
  let dir: string;
  let home: string;
  let flagFile: string;
  let envFile: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollgate-kubeconfig-'));
    home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), kubeconfigYaml('https://home.example:6443'));
    flagFile = join(dir, 'flag.yaml');
    writeFileSync(flagFile, kubeconfigYaml('https://flag.example:6443', 'team-a'));
    envFile = join(dir, 'env.yaml');
    writeFileSync(envFile, kubeconfigYaml('https://env.example:6443'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prefers --kubeconfig over KUBECONFIG and home', () => {
    const loaded = loadKubeConfig({ kubeconfig: flagFile, env: { KUBECONFIG: envFile }, homeDir: home });
    expect(loaded.source).toBe('flag');
    expect(loaded.kubeConfig.getCurrentCluster()?.server).toBe('https://flag.example:6443');
    expect(currentNamespace(loaded.kubeConfig)).toBe('team-a');
  });

  it('uses KUBECONFIG when no flag is given, merging several files', () => {
    const second = join(dir, 'second.yaml');
    writeFileSync(second, kubeconfigYaml('https://second.example:6443').replaceAll('ctx', 'other'));
    const loaded = loadKubeConfig({ env: { KUBECONFIG: `${envFile}:${second}` }, homeDir: home });
    expect(loaded.source).toBe('env');
    expect(loaded.kubeConfig.getCurrentCluster()?.server).toBe('https://env.example:6443');
    expect(loaded.kubeConfig.getContexts().map((c) => c.name)).toContain('other');
    expect(currentNamespace(loaded.kubeConfig)).toBe('default');
  });

  it('falls back to ~/.kube/config', () => {
    const loaded = loadKubeConfig({ env: {}, homeDir: home });
    expect(loaded.source).toBe('home');
    expect(loaded.kubeConfig.getCurrentCluster()?.server).toBe('https://home.example:6443');
  });

  it('uses the in-cluster service account when nothing else exists', () => {
    const root = join(dir, 'pod');
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'tok');
    writeFileSync(join(sa, 'namespace'), 'rollgate-system');
    const loaded = loadKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      homeDir: join(dir, 'nohome'),
      inClusterRoot: root,
    });
    expect(loaded.source).toBe('in-cluster');
    expect(loaded.origin).toBe('https://10.0.0.1:443');
    expect(currentNamespace(loaded.kubeConfig)).toBe('rollgate-system');
  });

  it('names the missing file when --kubeconfig points nowhere', () => {
    expect(() => loadKubeConfig({ kubeconfig: join(dir, 'nope.yaml'), env: {}, homeDir: home })).toThrow(
      /nope\.yaml \(from --kubeconfig\) does not exist/,
    );
  });

  it('says what it tried when there is no config at all', () => {
    let caught: unknown;
    try {
      loadKubeConfig({ env: {}, homeDir: join(dir, 'nohome') });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'kube.config_not_found' });
    expect(String(caught)).toMatch(/KUBECONFIG/);
  });
});

describe('connectKube with a context', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollgate-context-'));
    file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- { name: prod, cluster: { server: "https://prod.example:6443" } }',
        '- { name: dev, cluster: { server: "https://dev.example:6443" } }',
        'users:',
        '- { name: u, user: { token: abc } }',
        'contexts:',
        '- { name: prod, context: { cluster: prod, user: u, namespace: shop } }',
        '- { name: dev, context: { cluster: dev, user: u } }',
        'current-context: dev',
        '',
      ].join('\n'),
    );
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("takes the named context's cluster and namespace; -n still wins", () => {
    const prod = connectKube({ kubeconfig: file, context: 'prod' });
    expect(prod.clients.kubeConfig.getCurrentCluster()?.server).toBe('https://prod.example:6443');
    expect(prod.namespace).toBe('shop');
    expect(connectKube({ kubeconfig: file, context: 'prod', namespace: 'other' }).namespace).toBe('other');
    const current = connectKube({ kubeconfig: file });
    expect(current.clients.kubeConfig.getCurrentCluster()?.server).toBe('https://dev.example:6443');
    expect(current.namespace).toBe('default');
  });

  it('refuses a context the kubeconfig does not hold', () => {
    expect(() => connectKube({ kubeconfig: file, context: 'staging' })).toThrow(KubeContextNotFoundError);
    expect(() => connectKube({ kubeconfig: file, context: 'staging' })).toThrow(
      `context "staging" not found in kubeconfig ${file} (contexts: prod, dev)`,
    );
  });
});
