// Argo CD cluster Secrets read into registrations: the good shapes, and each bad input refused with a message that names the field and never the token.
import { describe, expect, it } from 'vitest';
import {
  parseArgoCdClusterSecret,
  type ClusterSecretObject,
} from '../../../src/clusters/argocd-cluster-secret.ts';
import { selfSignedCertificate } from '../../support/tls-test-server.ts';

const TOKEN = 'eyJhbGciOi.secret-token-value';
const { cert, key } = selfSignedCertificate();
const CA = cert.toString('base64');
const KEY = key.toString('base64');

/** A Secret as read from the API server: every value base64, as `data` holds it. */
function secret(data: Record<string, string | object>, name = 'prod-secret'): ClusterSecretObject {
  const encoded: Record<string, string> = {};
  for (const [k, v] of Object.entries(data))
    encoded[k] = Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64');
  return {
    metadata: {
      name,
      namespace: 'argocd',
      uid: 'u1',
      labels: { 'argocd.argoproj.io/secret-type': 'cluster' },
    },
    data: encoded,
  };
}

describe('parseArgoCdClusterSecret: what Argo CD users register', () => {
  it('reads a bearer token with a CA, as Argo CD documents it', () => {
    const parsed = parseArgoCdClusterSecret(
      secret({
        name: 'prod-eu',
        server: 'https://prod.example.com:6443/',
        config: { bearerToken: TOKEN, tlsClientConfig: { insecure: false, caData: CA, serverName: 'kube' } },
        namespaces: 'a,b',
        clusterResources: 'true',
        project: 'p',
      }),
    );
    expect(parsed).toEqual({
      ok: true,
      secret: { namespace: 'argocd', name: 'prod-secret', uid: 'u1' },
      spec: {
        name: 'prod-eu',
        server: 'https://prod.example.com:6443',
        bearerToken: TOKEN,
        caData: CA,
        insecure: false,
        serverName: 'kube',
      },
    });
  });

  it('reads a client certificate and key, and insecure', () => {
    const parsed = parseArgoCdClusterSecret(
      secret({
        name: 'edge-1',
        server: 'https://10.0.0.1',
        config: { tlsClientConfig: { certData: CA, keyData: KEY, insecure: true } },
      }),
    );
    expect(parsed.ok && parsed.spec).toMatchObject({ certData: CA, keyData: KEY, insecure: true });
  });

  it('reads stringData (an object not yet written) as data', () => {
    const parsed = parseArgoCdClusterSecret({
      metadata: { name: 's', namespace: 'argocd' },
      stringData: { name: 'dev', server: 'http://127.0.0.1:8001', config: '{"bearerToken":"t"}' },
    });
    expect(parsed.ok && parsed.spec.server).toBe('http://127.0.0.1:8001');
  });
});

describe('parseArgoCdClusterSecret: bad input is refused, never thrown, and says which field', () => {
  const rows: Array<{ name: string; data: Record<string, string | object>; problem: RegExp }> = [
    { name: 'no name', data: { server: 'https://a', config: {} }, problem: /data\.name is missing/ },
    {
      name: 'a name Rollgate cannot use',
      data: { name: 'Prod_EU', server: 'https://a', config: {} },
      problem: /data\.name "Prod_EU" must be lowercase/,
    },
    { name: 'no server', data: { name: 'a', config: {} }, problem: /data\.server is missing/ },
    {
      name: 'a server that is no URL',
      data: { name: 'a', server: 'not a url', config: {} },
      problem: /data\.server "not a url" is not a URL/,
    },
    {
      name: 'a server of another scheme',
      data: { name: 'a', server: 'ftp://host', config: {} },
      problem: /must be an https:\/\/ \(or http:\/\/\) URL/,
    },
    {
      name: 'credentials in the server URL',
      data: { name: 'a', server: 'https://u:p@host', config: {} },
      problem: /data\.server must not carry credentials/,
    },
    { name: 'no config', data: { name: 'a', server: 'https://a' }, problem: /data\.config is missing/ },
    {
      name: 'config that is not JSON',
      data: { name: 'a', server: 'https://a', config: `{"bearerToken": "${TOKEN}"` },
      problem: /data\.config is not valid JSON/,
    },
    {
      name: 'config that is a list',
      data: { name: 'a', server: 'https://a', config: '[1]' },
      problem: /data\.config must be a JSON object/,
    },
    {
      name: 'awsAuthConfig',
      data: { name: 'a', server: 'https://a', config: { awsAuthConfig: { clusterName: 'x' } } },
      problem: /^unsupported: awsAuthConfig \(EKS IAM authentication\)/,
    },
    {
      name: 'execProviderConfig',
      data: { name: 'a', server: 'https://a', config: { execProviderConfig: { command: 'x' } } },
      problem: /^unsupported: execProviderConfig/,
    },
    {
      name: 'basic authentication',
      data: { name: 'a', server: 'https://a', config: { username: 'u', password: 'p' } },
      problem: /^unsupported: username \(basic authentication\)/,
    },
    {
      name: 'a field Argo CD does not have',
      data: { name: 'a', server: 'https://a', config: { tokn: 'x' } },
      problem: /^unsupported: data\.config\.tokn/,
    },
    {
      name: 'a bearer token that is no string',
      data: { name: 'a', server: 'https://a', config: { bearerToken: 42 } },
      problem: /data\.config\.bearerToken must be a string/,
    },
    {
      name: 'caData that is no certificate',
      data: {
        name: 'a',
        server: 'https://a',
        config: { tlsClientConfig: { caData: Buffer.from('hello').toString('base64') } },
      },
      problem: /caData must be base64 of PEM certificates/,
    },
    {
      name: 'a certificate without its key',
      data: { name: 'a', server: 'https://a', config: { tlsClientConfig: { certData: CA } } },
      problem: /certData and keyData go together/,
    },
    {
      name: 'keyData that is no key',
      data: { name: 'a', server: 'https://a', config: { tlsClientConfig: { certData: CA, keyData: CA } } },
      problem: /keyData must be base64 of a PEM private key/,
    },
    {
      name: 'insecure that is no boolean',
      data: { name: 'a', server: 'https://a', config: { tlsClientConfig: { insecure: 'yes' } } },
      problem: /insecure must be true or false/,
    },
    {
      name: 'an unknown TLS field',
      data: { name: 'a', server: 'https://a', config: { tlsClientConfig: { caFile: '/x' } } },
      problem: /^unsupported: config\.tlsClientConfig\.caFile/,
    },
    {
      name: 'a token over plain http to another host',
      data: { name: 'a', server: 'http://kube.example.com', config: { bearerToken: TOKEN } },
      problem: /credentials would travel in clear to kube\.example\.com/,
    },
    {
      name: 'a key Argo CD does not know',
      data: { name: 'a', server: 'https://a', config: {}, kubeconfig: 'x' },
      problem: /^unsupported: data\.kubeconfig/,
    },
  ];

  it.each(rows)('$name', ({ data, problem }) => {
    const parsed = parseArgoCdClusterSecret(secret(data));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.some((text) => problem.test(text))).toBe(true);
    // The token never appears in what is said about the Secret.
    expect(parsed.problems.join('\n')).not.toContain(TOKEN);
    expect(parsed.problems.join('\n')).not.toContain('secret-token');
  });

  it('names a Secret without data.name after the Secret itself', () => {
    const parsed = parseArgoCdClusterSecret(secret({ server: 'https://a', config: {} }, 'my-cluster-secret'));
    expect(parsed.ok === false && parsed.name).toBe('my-cluster-secret');
  });

  it('survives a Secret with no data at all', () => {
    const parsed = parseArgoCdClusterSecret({ metadata: { name: 'empty', namespace: 'argocd' } });
    expect(parsed.ok).toBe(false);
  });
});
