// The rollout verbs' own kubeconfig reading: what it serves without client-node, and everything it leaves to client-node.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plainKubeTargetOf, type PlainKubeTarget } from '../../../src/kube/plain-kube-http.ts';
import { readSimpleKubeconfig, type SimpleKubeconfig } from '../../../src/kube/simple-kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'simple-kubeconfig-'));

function kubeconfig(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const CLUSTERS = `clusters:
- name: prod
  cluster:
    server: https://api.example:6443/
    certificate-authority-data: ${Buffer.from('CA').toString('base64')}
    tls-server-name: api.internal
- name: dev
  cluster:
    server: http://127.0.0.1:8080
    insecure-skip-tls-verify: true
`;
const CONTEXTS = `contexts:
- name: prod
  context: {cluster: prod, user: alice, namespace: shop}
- name: dev
  context: {cluster: dev, user: anon}
current-context: prod
`;

/** Where the CLI's requests go with `simple`, and how they authenticate (plain-kube-http.ts). */
function targetOf(simple: SimpleKubeconfig | undefined): PlainKubeTarget | undefined {
  return simple && plainKubeTargetOf(simple.cluster, simple.user)?.target;
}

describe('readSimpleKubeconfig', () => {
  it('serves a token user: the server without its trailing slash, the CA, the context namespace', () => {
    const file = kubeconfig(
      'token',
      `${CLUSTERS}users:\n- name: alice\n  user: {token: abc}\n- name: anon\n  user: {}\n${CONTEXTS}`,
    );
    const prod = readSimpleKubeconfig({ kubeconfig: file, env: {} });
    expect(prod?.namespace).toBe('shop');
    expect(targetOf(prod)).toEqual({
      server: 'https://api.example:6443',
      ca: Buffer.from('CA'),
      cert: undefined,
      key: undefined,
      skipTlsVerify: false,
      tlsServerName: 'api.internal',
      authorization: 'Bearer abc',
    });
    const dev = readSimpleKubeconfig({ kubeconfig: file, context: 'dev', namespace: 'web', env: {} });
    expect(dev?.namespace).toBe('web');
    expect(targetOf(dev)).toMatchObject({ server: 'http://127.0.0.1:8080', authorization: undefined });
  });

  it('reads certificate files relative to the kubeconfig, before inline data (client-node’s order)', () => {
    writeFileSync(join(dir, 'client.crt'), 'CERT FROM FILE');
    const file = kubeconfig(
      'cert',
      `${CLUSTERS}users:\n- name: alice\n  user:\n    client-certificate: client.crt\n    client-certificate-data: ${Buffer.from('INLINE').toString('base64')}\n    client-key-data: ${Buffer.from('KEY').toString('base64')}\n- name: anon\n  user: {}\n${CONTEXTS}`,
    );
    const config = targetOf(readSimpleKubeconfig({ env: { KUBECONFIG: file } }));
    expect(config?.cert?.toString()).toBe('CERT FROM FILE');
    expect(config?.key?.toString()).toBe('KEY');
  });

  it('leaves to client-node: exec plugins, auth providers, proxies, plain HTTP with verification, several files, unknown contexts', () => {
    const users = (user: string) =>
      `${CLUSTERS}users:\n- name: alice\n  user: ${user}\n- name: anon\n  user: {}\n${CONTEXTS}`;
    const cases = {
      exec: users('{exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}}'),
      authProvider: users('{auth-provider: {name: oidc}}'),
      impersonation: users('{token: abc, as: bob}'),
      proxy: `${CLUSTERS.replace('tls-server-name: api.internal', 'proxy-url: http://proxy:3128')}users:\n- name: alice\n  user: {}\n- name: anon\n  user: {}\n${CONTEXTS}`,
      missingCertFile: users('{client-certificate: /nowhere/client.crt}'),
    };
    for (const [name, text] of Object.entries(cases))
      expect(readSimpleKubeconfig({ kubeconfig: kubeconfig(name, text), env: {} }), name).toBeUndefined();

    const plain = kubeconfig('plain', users('{}').replace('insecure-skip-tls-verify: true', ''));
    expect(readSimpleKubeconfig({ kubeconfig: plain, context: 'dev', env: {} })).toBeUndefined();
    const simple = kubeconfig('simple', users('{}'));
    expect(readSimpleKubeconfig({ kubeconfig: simple, context: 'nope', env: {} })).toBeUndefined();
    expect(readSimpleKubeconfig({ env: { KUBECONFIG: `${simple}:${plain}` } })).toBeUndefined();
    expect(readSimpleKubeconfig({ kubeconfig: join(dir, 'missing'), env: {} })).toBeUndefined();
    expect(readSimpleKubeconfig({ env: { HOME: join(dir, 'no-home') } })).toBeUndefined();
  });
});
