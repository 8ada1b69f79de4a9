// A GitSource object → its source's settings, or the problems (naming the field) that keep it from running.
import { describe, expect, it } from 'vitest';
import { PRUNE_FINALIZER } from '../../../src/manifest/git-source.ts';
import {
  finalizersWanted,
  readGitSource,
  withSecrets,
  type ParsedGitSource,
  type SecretData,
} from '../../../src/sources/git-source-settings.ts';

const CONTROL = 'rollgate-system';

function object(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'GitSource',
    metadata: { name: 'apps', namespace: 'team-a', generation: 3, ...metadata },
    spec,
  };
}

const read = (raw: unknown) => readGitSource(raw, { controlNamespace: CONTROL });
const b64 = (text: string): string => Buffer.from(text).toString('base64');

describe('readGitSource', () => {
  it('maps a spec onto the settings of a source named <namespace>.<name>, with defaults', () => {
    const reading = read(object({ url: 'https://git.example/org/apps.git', path: 'envs/prod' }));
    expect(reading).toMatchObject({
      ok: true,
      source: 'team-a.apps',
      generation: 3,
      pruneOnDelete: false,
      settings: {
        name: 'team-a.apps',
        url: 'https://git.example/org/apps.git',
        branch: 'main',
        path: 'envs/prod',
        interval: '30s',
        namespace: 'team-a',
        prune: false,
        selfHeal: false,
        render: 'auto',
        adopt: 'none',
        scope: { namespaces: [], clusterScoped: [], kinds: { deny: [] } },
      },
    });
  });

  it('carries the fields of the other parts (service account, dependsOn as internal names, sync timeout)', () => {
    const reading = read(
      object({
        url: 'https://git.example/a.git',
        ref: { branch: 'release' },
        interval: 10,
        serviceAccountName: 'deployer',
        dependsOn: [{ name: 'infra' }, { name: 'db', namespace: 'team-b' }],
        syncTimeout: '2m',
        prune: true,
        selfHeal: true,
        render: 'kustomize',
      }),
    );
    expect(reading).toMatchObject({
      ok: true,
      settings: {
        branch: 'release',
        interval: 10,
        serviceAccountName: 'deployer',
        dependsOn: ['team-a.infra', 'team-b.db'],
        syncTimeout: '2m',
        prune: true,
        selfHeal: true,
        render: 'kustomize',
      },
    });
  });

  const refusals: Array<{
    name: string;
    spec: Record<string, unknown>;
    namespace?: string;
    reason: string;
    field: string;
  }> = [
    { name: 'no url', spec: {}, reason: 'InvalidSpec', field: 'spec.url' },
    {
      name: 'a url that is not http(s)',
      spec: { url: 'ssh://git@x/y.git' },
      reason: 'InvalidSpec',
      field: 'spec.url',
    },
    {
      name: 'two refs',
      spec: { url: 'https://x/y.git', ref: { branch: 'a', tag: 'v1' } },
      reason: 'InvalidSpec',
      field: 'spec.ref',
    },
    {
      name: 'a tag',
      spec: { url: 'https://x/y.git', ref: { tag: 'v1' } },
      reason: 'UnsupportedRef',
      field: 'spec.ref.tag',
    },
    {
      name: 'a bad interval',
      spec: { url: 'https://x/y.git', interval: 'soon' },
      reason: 'InvalidSpec',
      field: 'spec.interval',
    },
    {
      name: 'an unknown field',
      spec: { url: 'https://x/y.git', branch: 'main' },
      reason: 'InvalidSpec',
      field: 'spec',
    },
    {
      name: 'a bad render mode',
      spec: { url: 'https://x/y.git', render: 'helm' },
      reason: 'InvalidSpec',
      field: 'spec.render',
    },
    {
      name: 'credentials over plain http to another host',
      spec: { url: 'http://git.example/y.git', credentials: { secretRef: { name: 'c' } } },
      reason: 'InvalidSpec',
      field: 'spec.url',
    },
    {
      name: 'a tenant asking for another namespace',
      spec: { url: 'https://x/y.git', scope: { namespaces: ['kube-system'] } },
      reason: 'ScopeNotAllowed',
      field: 'spec.scope.namespaces',
    },
    {
      name: 'a tenant asking for cluster-scoped kinds',
      spec: { url: 'https://x/y.git', scope: { clusterScoped: ['Namespace'] } },
      reason: 'ScopeNotAllowed',
      field: 'spec.scope.clusterScoped',
    },
    {
      name: 'a tenant allowing RoleBindings',
      spec: {
        url: 'https://x/y.git',
        scope: { kinds: { allow: ['rbac.authorization.k8s.io/RoleBinding'] } },
      },
      reason: 'ScopeNotAllowed',
      field: 'spec.scope.kinds.allow',
    },
    {
      name: 'a tenant applying to another cluster',
      spec: { url: 'https://x/y.git', cluster: 'eu-west' },
      reason: 'ScopeNotAllowed',
      field: 'spec.cluster',
    },
  ];
  it('lets a GitSource of the control namespace target another cluster, and a tenant the local one', () => {
    const admin = read(object({ url: 'https://x/y.git', cluster: 'eu-west' }, { namespace: CONTROL }));
    expect(admin.ok && admin.settings.cluster).toBe('eu-west');
    const tenant = read(object({ url: 'https://x/y.git', cluster: 'in-cluster' }));
    expect(tenant.ok && tenant.settings.cluster).toBe('in-cluster');
  });
  for (const row of refusals)
    it(`refuses ${row.name}, naming ${row.field} (${row.reason})`, () => {
      const reading = read(object(row.spec, row.namespace ? { namespace: row.namespace } : {}));
      expect(reading.ok).toBe(false);
      if (reading.ok) return;
      expect(reading.problems).toContainEqual(
        expect.objectContaining({ reason: row.reason, field: row.field }),
      );
    });

  it('refuses a namespace and name too long for the label its objects carry', () => {
    const fits = read(object({ url: 'https://x/y.git' }, { name: 'a'.repeat(62 - 'team-a.'.length + 1) }));
    expect(fits).toMatchObject({ ok: true });
    const reading = read(object({ url: 'https://x/y.git' }, { name: 'a'.repeat(60) }));
    expect(reading).toMatchObject({
      ok: false,
      problems: [{ reason: 'InvalidSpec', field: 'metadata.name' }],
    });
  });

  it('lets an object in the control namespace widen its scope', () => {
    const reading = read(
      object(
        { url: 'https://x/y.git', scope: { namespaces: ['*'], clusterScoped: ['Namespace'] } },
        { namespace: CONTROL },
      ),
    );
    expect(reading).toMatchObject({
      ok: true,
      settings: { scope: { namespaces: ['*'], clusterScoped: ['Namespace'] } },
    });
  });

  it('reads the Secrets it names in its own namespace only', () => {
    const reading = read(
      object({
        url: 'https://x/y.git',
        credentials: { secretRef: { name: 'creds' } },
        webhook: { secretRef: { name: 'hook' } },
      }),
    ) as ParsedGitSource;
    expect(reading.credentials).toEqual({ namespace: 'team-a', name: 'creds' });
    expect(reading.webhook).toEqual({ namespace: 'team-a', name: 'hook', key: 'secret' });
  });
});

describe('withSecrets', () => {
  const parsed = read(
    object({
      url: 'https://x/y.git',
      credentials: { secretRef: { name: 'creds' } },
      webhook: { secretRef: { name: 'hook', key: 'token' } },
    }),
  ) as ParsedGitSource;

  it('puts the credentials into the settings and hands the webhook secret back', () => {
    const resolved = withSecrets(
      parsed,
      new Map<string, SecretData>([
        ['team-a/creds', { username: b64('bot'), password: b64('s3cret-password-x') }],
        ['team-a/hook', { token: b64('hook-secret-of-team-a') }],
      ]),
    );
    expect(resolved).toEqual({
      ok: true,
      settings: { ...parsed.settings, auth: { username: 'bot', password: 's3cret-password-x' } },
      webhookSecret: 'hook-secret-of-team-a',
    });
  });

  it('refuses a webhook secret under 16 characters, saying how long it is and never what it is', () => {
    const short = withSecrets(
      parsed,
      new Map<string, SecretData>([
        ['team-a/creds', { password: b64('s3cret-password-x') }],
        ['team-a/hook', { token: b64('guessable') }],
      ]),
    );
    expect(short).toMatchObject({
      ok: false,
      problem: { reason: 'InvalidSpec', field: 'spec.webhook.secretRef' },
    });
    expect(JSON.stringify(short)).toContain('has 9 characters; at least 16 are needed');
    expect(JSON.stringify(short)).not.toContain('guessable');
  });

  it('is CredentialsNotFound for a missing Secret or key, naming the field and never a value', () => {
    expect(withSecrets(parsed, new Map([['team-a/creds', undefined]]))).toMatchObject({
      ok: false,
      problem: { reason: 'CredentialsNotFound', field: 'spec.credentials.secretRef.name' },
    });
    const noKey = withSecrets(
      parsed,
      new Map<string, SecretData>([
        ['team-a/creds', { token: b64('value-that-must-not-show') }],
        ['team-a/hook', { other: b64('x') }],
      ]),
    );
    expect(noKey).toMatchObject({
      ok: false,
      problem: { reason: 'CredentialsNotFound', field: 'spec.webhook.secretRef' },
    });
    expect(JSON.stringify(noKey)).not.toContain('value-that-must-not-show');
  });
});

describe('finalizersWanted', () => {
  it('adds the prune finalizer with pruneOnDelete and takes it away without', () => {
    expect(finalizersWanted(read(object({ url: 'https://x/y.git', pruneOnDelete: true })))).toEqual([
      PRUNE_FINALIZER,
    ]);
    expect(
      finalizersWanted(read(object({ url: 'https://x/y.git' }, { finalizers: ['other', PRUNE_FINALIZER] }))),
    ).toEqual(['other']);
    expect(finalizersWanted(read(object({ url: 'https://x/y.git' })))).toBeUndefined();
  });

  it('leaves the finalizers of an object being deleted alone', () => {
    const deleting = read(
      object(
        { url: 'https://x/y.git' },
        { finalizers: [PRUNE_FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z' },
      ),
    );
    expect(finalizersWanted(deleting)).toBeUndefined();
  });
});
