import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  configKeys,
  loadConfig,
  resolveSecret,
  SecretUnavailableError,
  resolveSourceAuth,
} from '../../../src/config/index.ts';

function tempFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rollgate-config-')), 'rollgate.yaml');
  writeFileSync(file, text);
  return file;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError)
      return err.problems.map((p) => `${p.origin ?? ''} ${p.path}: ${p.message}`);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('gives the documented defaults with no file and no environment', () => {
    const config = loadConfig({ env: {} });
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(config.server.port).toBe(8080);
    expect(config.workers.concurrency).toBe(8);
    expect(config.sources).toEqual([]);
  });

  it('the shipped config/rollgate.yaml is valid and equals the defaults', () => {
    expect(loadConfig({ file: 'config/rollgate.yaml', env: {} })).toEqual(loadConfig({ env: {} }));
  });

  it('fills source defaults', () => {
    const file = tempFile('sources:\n  - { name: apps, url: http://127.0.0.1:9000/apps.git }\n');
    const [source] = loadConfig({ file, env: {} }).sources;
    expect(source).toMatchObject({
      name: 'apps',
      branch: 'main',
      path: '.',
      interval: '30s',
      prune: false,
      selfHeal: false,
      scope: { namespaces: [], clusterScoped: [], kinds: { deny: [] } },
      adopt: 'none',
    });
  });

  it("reads a source's scope and adoption, and names the key of a bad one", () => {
    const file = tempFile(
      [
        'sources:',
        '  - name: platform',
        '    url: http://127.0.0.1:9000/platform.git',
        '    namespace: platform',
        '    scope:',
        '      namespaces: [team-a, "*"]',
        '      clusterScoped: [Namespace, apiextensions.k8s.io/CustomResourceDefinition]',
        '      kinds: { allow: ["*", RoleBinding], deny: [Secret] }',
        '    adopt: unowned',
      ].join('\n'),
    );
    expect(loadConfig({ file, env: {} }).sources[0]).toMatchObject({
      scope: {
        namespaces: ['team-a', '*'],
        clusterScoped: ['Namespace', 'apiextensions.k8s.io/CustomResourceDefinition'],
        kinds: { allow: ['*', 'RoleBinding'], deny: ['Secret'] },
      },
      adopt: 'unowned',
    });
    const bad = tempFile(
      [
        'sources:',
        '  - name: apps',
        '    url: http://127.0.0.1:9000/apps.git',
        '    scope: { namespaces: [Kube_System], clusterScoped: ["apps/"], clusters: true }',
        '    adopt: everything',
      ].join('\n'),
    );
    const problems = problemsOf(() => loadConfig({ file: bad, env: {} })).join('\n');
    expect(problems).toMatch(/sources\[0\]\.scope\.namespaces\[0\]: must be a namespace name or \*/);
    expect(problems).toMatch(/sources\[0\]\.scope\.clusterScoped\[0\]: must be a kind/);
    expect(problems).toMatch(/sources\[0\]\.scope.*clusters/);
    expect(problems).toMatch(/sources\[0\]\.adopt/);
  });

  it("reads a source's serviceAccountName, and names the key of a bad one", () => {
    const source = (account: string): string =>
      tempFile(
        [
          'sources:',
          '  - name: tenant',
          '    url: http://127.0.0.1:9000/tenant.git',
          '    namespace: team-a',
          `    serviceAccountName: ${account}`,
        ].join('\n'),
      );
    expect(loadConfig({ file: source('deployer'), env: {} }).sources[0]?.serviceAccountName).toBe('deployer');
    const problems = problemsOf(() => loadConfig({ file: source('"team-a:deployer"'), env: {} })).join('\n');
    expect(problems).toMatch(/sources\[0\]\.serviceAccountName: must be a ServiceAccount name/);
  });

  it('lets the environment override the file, and flags override both', () => {
    const file = tempFile('workers:\n  concurrency: 3\nserver:\n  port: 9000\n');
    const env = {
      ROLLGATE_WORKERS_CONCURRENCY: '5',
      ROLLGATE_SERVER_PORT: '9100',
      ROLLGATE_REDIS_URL: 'redis://r:6380',
    };
    const config = loadConfig({ file, env, overrides: { 'server.port': 9200 } });
    expect(config.workers.concurrency).toBe(5);
    expect(config.server.port).toBe(9200);
    expect(config.redis.url).toBe('redis://r:6380');
  });

  it('derives an environment variable for every leaf, including nested webhook secrets', () => {
    const names = configKeys().map((k) => k.env);
    expect(names).toContain('ROLLGATE_WORKERS_LOCK_DURATION_MS');
    expect(names).toContain('ROLLGATE_WEBHOOKS_GITHUB_SECRET_FILE');
    expect(names).toContain('ROLLGATE_SOURCES');
    const config = loadConfig({ env: { ROLLGATE_WEBHOOKS_GITLAB_SECRET_ENV: 'GL_TOKEN' } });
    expect(config.webhooks.gitlab).toEqual({ secretEnv: 'GL_TOKEN' });
  });

  it('narrows lists and watches to one namespace and skips the CRD install from the environment', () => {
    expect(loadConfig({ env: {} }).kubernetes).toMatchObject({ watchNamespace: '', installCrds: true });
    // The namespaced install sets both from its Deployment (the namespace from the downward API).
    const config = loadConfig({
      env: { ROLLGATE_KUBERNETES_WATCH_NAMESPACE: 'team-a', ROLLGATE_KUBERNETES_INSTALL_CRDS: 'false' },
    });
    expect(config.kubernetes).toMatchObject({ watchNamespace: 'team-a', installCrds: false });
  });

  it('accepts sources from the environment as JSON', () => {
    const config = loadConfig({ env: { ROLLGATE_SOURCES: '[{"name":"a","url":"http://h/a.git"}]' } });
    expect(config.sources[0]?.name).toBe('a');
  });

  it('refuses a bad value with the file, line, key path and reason', () => {
    const file = tempFile('server:\n  port: 8080\nworkers:\n  concurrency: 0\n');
    const problems = problemsOf(() => loadConfig({ file, env: {} }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4:\\d+ workers\\.concurrency: .*>=1`),
    );
  });

  it('names the environment variable when that is where a bad value came from', () => {
    expect(problemsOf(() => loadConfig({ env: { ROLLGATE_SERVER_PORT: 'eighty' } }))).toEqual([
      'env ROLLGATE_SERVER_PORT server.port: expected a number, got "eighty"',
    ]);
  });

  it('refuses unknown keys, duplicate source names, bad URLs and two secrets at once', () => {
    const file = tempFile(
      [
        'workers: { concurency: 4 }',
        'sources:',
        '  - { name: apps, url: "ftp://x" }',
        '  - { name: apps, url: "http://h/a.git" }',
        'webhooks:',
        '  github: { secret: a, secretEnv: B }',
      ].join('\n'),
    );
    const problems = problemsOf(() => loadConfig({ file, env: {} })).join('\n');
    expect(problems).toMatch(/workers: Unrecognized key: "concurency"/);
    expect(problems).toMatch(/sources\[0\]\.url: must be an http\(s\) URL/);
    expect(problems).toMatch(/sources\[1\]\.name: duplicate source name "apps"/);
    expect(problems).toMatch(/webhooks\.github: give at most one of secret, secretFile, secretEnv/);
  });

  it('reads promotions with their defaults (the issue-13 contract)', () => {
    const file = tempFile(
      [
        'sources:',
        '  - { name: staging, url: http://git.example/acme/deploy.git, branch: main, path: envs/staging }',
        '  - { name: prod, url: http://git.example/acme/deploy.git, branch: main, path: envs/prod }',
        'promotions:',
        '  - name: staging-to-prod',
        '    from: { source: staging }',
        '    to: { source: prod }',
        '    pullRequest:',
        '      provider: github',
        '      apiUrl: https://api.github.com',
        '      repository: acme/deploy',
        '      tokenEnv: FORGE_TOKEN',
        '      labels: [promotion]',
      ].join('\n'),
    );
    const [promotion] = loadConfig({ file, env: {} }).promotions;
    expect(promotion).toEqual({
      name: 'staging-to-prod',
      from: { source: 'staging', together: false },
      to: { source: 'prod' },
      files: [],
      pullRequest: {
        provider: 'github',
        apiUrl: 'https://api.github.com',
        repository: 'acme/deploy',
        tokenEnv: 'FORGE_TOKEN',
        labels: ['promotion'],
        reviewers: [],
        draft: false,
        autoMerge: false,
        allowInsecureHttp: false,
        checksInterval: '30s',
        author: { name: 'Rollgate', email: 'rollgate@users.noreply.invalid' },
      },
    });
  });

  it('reads a release and its files, and refuses paths leaving a source and a release without its Rollouts, naming the key', () => {
    const config = (promotion: string[]) =>
      tempFile(
        [
          'sources:',
          '  - { name: staging, url: http://git.example/acme/deploy.git, branch: main, path: envs/staging }',
          '  - { name: prod, url: http://git.example/acme/deploy.git, branch: main, path: envs/prod }',
          'promotions:',
          '  - name: shop',
          '    to: { source: prod }',
          '    pullRequest: { provider: github, apiUrl: https://api.github.com, repository: acme/deploy, tokenEnv: T }',
          ...promotion,
        ].join('\n'),
      );
    const [release] = loadConfig({
      file: config([
        '    from: { source: staging, rollouts: [web, api], together: true }',
        '    files: [{ from: config/shop.yaml }, { from: settings/, to: prod-settings }]',
      ]),
      env: {},
    }).promotions;
    expect(release?.from).toEqual({ source: 'staging', rollouts: ['web', 'api'], together: true });
    expect(release?.files).toEqual([
      { from: 'config/shop.yaml', to: 'config/shop.yaml' },
      { from: 'settings/', to: 'prod-settings' },
    ]);
    const problems = problemsOf(() =>
      loadConfig({
        file: config([
          '    from: { source: staging, together: true }',
          '    files: [{ from: ../prod/secret.yaml }, { from: a.yaml, to: /etc/a.yaml }]',
        ]),
        env: {},
      }),
    ).join('\n');
    expect(problems).toContain(
      'promotions[0].from.rollouts: from.together needs the Rollouts of the release listed',
    );
    expect(problems).toContain(`promotions[0].files[0].from: "../prod/secret.yaml" leaves the source's path`);
    expect(problems).toContain('promotions[0].files[1].to: "/etc/a.yaml" is absolute');
  });

  it("reads a source's notifications and commitStatus, and refuses what cannot be used, naming the key", () => {
    const good = tempFile(
      [
        'sources:',
        '  - name: apps',
        '    url: https://git.example/org/apps.git',
        '    notifications:',
        '      notifications.argoproj.io/subscribe.on-sync-failed.slack: deploys',
        '    commitStatus: { provider: github, apiUrl: https://api.github.com, repository: org/apps, tokenEnv: GH }',
      ].join('\n'),
    );
    const [source] = loadConfig({ file: good, env: {} }).sources;
    expect(source?.notifications).toEqual({
      'notifications.argoproj.io/subscribe.on-sync-failed.slack': 'deploys',
    });
    expect(source?.commitStatus).toMatchObject({
      provider: 'github',
      tokenEnv: 'GH',
      allowInsecureHttp: false,
    });
    const bad = tempFile(
      [
        'sources:',
        '  - name: apps',
        '    url: https://git.example/org/apps.git',
        '    notifications: { on-sync-failed.slack: deploys }',
        '    commitStatus: { provider: github, apiUrl: http://forge.example/api/v3, repository: org/apps }',
        '  - name: web',
        '    url: https://git.example/org/web.git',
        '    commitStatus: { provider: gitea, apiUrl: https://forge.example/api/v1, repository: org/web, token: short }',
      ].join('\n'),
    );
    const problems = problemsOf(() => loadConfig({ file: bad, env: {} })).join('\n');
    expect(problems).toMatch(
      /sources\[0\]\.notifications\.on-sync-failed\.slack: .*must be a subscribe annotation/,
    );
    expect(problems).toMatch(/sources\[0\]\.commitStatus: give exactly one of token, tokenEnv, tokenFile/);
    expect(problems).toMatch(
      /sources\[1\]\.commitStatus\.token: an inline secret must be at least 16 characters/,
    );
  });

  it('refuses a promotion naming an unknown source, going nowhere, or with no token', () => {
    const file = tempFile(
      [
        'sources:',
        '  - { name: staging, url: http://h/a.git }',
        'promotions:',
        '  - name: p',
        '    from: { source: staging }',
        '    to: { source: prd }',
        '    pullRequest: { provider: gitea, apiUrl: http://h/api/v1, repository: a/b }',
        '  - name: p',
        '    from: { source: staging }',
        '    to: { source: staging }',
        '    pullRequest: { provider: gitea, apiUrl: http://h, repository: a/b, token: t }',
      ].join('\n'),
    );
    const problems = problemsOf(() => loadConfig({ file, env: {} })).join('\n');
    expect(problems).toMatch(
      /:6:\d+ promotions\[0\]\.to\.source: no source named "prd" \(sources: staging\)/,
    );
    expect(problems).toMatch(/promotions\[0\]\.pullRequest: give exactly one of token, tokenEnv, tokenFile/);
    expect(problems).toMatch(/promotions\[1\]\.name: duplicate promotion name "p"/);
    expect(problems).toMatch(/promotions\[1\]\.to\.source: a promotion goes from one source to another/);
    const unknownForge = tempFile(
      [
        'sources: [{ name: a, url: http://h/a.git }, { name: b, url: http://h/b.git }]',
        'promotions:',
        '  - { name: p, from: { source: a }, to: { source: b },',
        '      pullRequest: { provider: bitbucket, apiUrl: http://h, repository: a/b, token: t } }',
      ].join('\n'),
    );
    expect(problemsOf(() => loadConfig({ file: unknownForge, env: {} })).join('\n')).toMatch(
      /promotions\[0\]\.pullRequest\.provider: .*github.*gitlab.*gitea/,
    );
  });

  it('reads Bitbucket and Azure DevOps promotions and webhooks, and refuses labels on Bitbucket, naming the key', () => {
    const file = tempFile(
      [
        'sources: [{ name: a, url: http://h/a.git }, { name: b, url: http://h/b.git }]',
        'promotions:',
        '  - { name: c, from: { source: a }, to: { source: b },',
        '      pullRequest: { provider: bitbucket-cloud, apiUrl: https://api.bitbucket.org/2.0, repository: ws/r, tokenEnv: T } }',
        '  - { name: d, from: { source: a }, to: { source: b },',
        '      pullRequest: { provider: bitbucket-datacenter, apiUrl: https://bb.example, repository: OPS/r, tokenEnv: T } }',
        '  - { name: z, from: { source: a }, to: { source: b }, pullRequest: { provider: azure-devops,',
        '      apiUrl: https://dev.azure.com/acme, repository: ops/r, tokenEnv: T, labels: [promotion] } }',
        'webhooks:',
        '  azure-devops: { username: rollgate, secretEnv: ADO_HOOK }',
      ].join('\n'),
    );
    const config = loadConfig({ file, env: {} });
    expect(config.promotions.map((p) => p.pullRequest.provider)).toEqual([
      'bitbucket-cloud',
      'bitbucket-datacenter',
      'azure-devops',
    ]);
    expect(config.webhooks['azure-devops']).toEqual({ username: 'rollgate', secretEnv: 'ADO_HOOK' });
    const labelled = tempFile(
      [
        'sources: [{ name: a, url: http://h/a.git }, { name: b, url: http://h/b.git }]',
        'promotions:',
        '  - { name: p, from: { source: a }, to: { source: b }, pullRequest: { provider: bitbucket-datacenter,',
        '      apiUrl: https://bb.example, repository: OPS/r, tokenEnv: T, labels: [promotion] } }',
      ].join('\n'),
    );
    expect(problemsOf(() => loadConfig({ file: labelled, env: {} })).join('\n')).toMatch(
      /promotions\[0\]\.pullRequest\.labels: Bitbucket pull requests have no labels/,
    );
  });

  it('takes a GitHub App instead of a token for GitHub only, with each of its parts given once', () => {
    const app = (pullRequest: string) =>
      tempFile(
        [
          'sources: [{ name: a, url: http://h/a.git }, { name: b, url: http://h/b.git }]',
          'promotions:',
          '  - name: p',
          '    from: { source: a }',
          '    to: { source: b }',
          `    pullRequest: ${pullRequest}`,
        ].join('\n'),
      );
    const good = loadConfig({
      file: app(
        '{ provider: github, apiUrl: https://api.github.com, repository: a/b, githubApp: { appId: 12, installationId: 34, privateKeyFile: /etc/app/key.pem } }',
      ),
      env: {},
    });
    expect(good.promotions[0]?.pullRequest.githubApp).toEqual({
      appId: 12,
      installationId: 34,
      privateKeyFile: '/etc/app/key.pem',
    });
    const problems = (pullRequest: string) =>
      problemsOf(() => loadConfig({ file: app(pullRequest), env: {} })).join('\n');
    expect(
      problems(
        '{ provider: gitlab, apiUrl: https://h/api/v4, repository: a/b, githubApp: { appId: 1, installationId: 2, privateKeyEnv: K } }',
      ),
    ).toMatch(
      /promotions\[0\]\.pullRequest: give exactly one of token, tokenEnv, tokenFile, githubApp \(githubApp: provider github only\)/,
    );
    expect(
      problems(
        '{ provider: github, apiUrl: https://h, repository: a/b, tokenEnv: T, githubApp: { appId: 1, installationId: 2, privateKeyEnv: K } }',
      ),
    ).toMatch(/promotions\[0\]\.pullRequest: give exactly one of token, tokenEnv, tokenFile, githubApp/);
    expect(
      problems(
        '{ provider: github, apiUrl: https://h, repository: a/b, githubApp: { appId: 1, installationId: 2 } }',
      ),
    ).toMatch(/promotions\[0\]\.pullRequest\.githubApp: give exactly one of privateKeyFile, privateKeyEnv/);
    expect(
      problems(
        '{ provider: github, apiUrl: https://h, repository: a/b, githubApp: { appId: 1, installationIdFile: /f, installationId: 2, privateKeyEnv: K } }',
      ),
    ).toMatch(
      /promotions\[0\]\.pullRequest\.githubApp: give exactly one of installationId, installationIdFile/,
    );
  });

  it('refuses an unknown --set key and lists the known ones', () => {
    expect(problemsOf(() => loadConfig({ env: {}, overrides: { 'worker.concurrency': '2' } }))[0]).toMatch(
      /worker\.concurrency: unknown setting \(known: .*workers\.concurrency/,
    );
  });

  it('reports invalid YAML with its line', () => {
    const file = tempFile('server:\n  port: [8080\n');
    expect(problemsOf(() => loadConfig({ file, env: {} }))[0]).toMatch(
      new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+`),
    );
  });
});

describe('resolveSecret', () => {
  it('reads inline, environment and file secrets', () => {
    const file = tempFile('s3cret\n');
    expect(resolveSecret('github', { secret: 'a' })).toBe('a');
    expect(resolveSecret('github', { secretEnv: 'GH' }, { GH: 'b' })).toBe('b');
    expect(resolveSecret('github', { secretFile: file })).toBe('s3cret');
    expect(resolveSecret('github', undefined)).toBeUndefined();
  });

  it('fails clearly, without the value, when the source is missing', () => {
    expect(() => resolveSecret('github', { secretEnv: 'NOPE' }, {})).toThrow(SecretUnavailableError);
    expect(() => resolveSecret('github', { secretFile: '/nonexistent/x' })).toThrow(
      /cannot read \/nonexistent\/x: ENOENT/,
    );
  });
});

describe('source intervals', () => {
  it('accepts the durations the poller can schedule and refuses zero or nonsense', () => {
    const env = (interval: string): Record<string, string> => ({
      ROLLGATE_SOURCES: JSON.stringify([{ name: 'a', url: 'http://h/a.git', interval }]),
    });
    expect(loadConfig({ env: env('1h30m') }).sources[0]?.interval).toBe('1h30m');
    expect(() => loadConfig({ env: env('0s') })).toThrow(
      /sources\[0\]\.interval: must be a duration above zero/,
    );
    expect(() => loadConfig({ env: env('soon') })).toThrow(/sources\[0\]\.interval/);
  });
});

describe('resolveSourceAuth', () => {
  it('resolves inline, environment and file credentials, and names what is missing', () => {
    const file = tempFile('tok-from-file\n');
    expect(
      resolveSourceAuth({ name: 'apps', auth: { username: 'git', passwordEnv: 'PW' } }, { PW: 'pw' }),
    ).toEqual({
      username: 'git',
      password: 'pw',
    });
    expect(resolveSourceAuth({ name: 'apps', auth: { tokenFile: file } }, {})).toEqual({
      token: 'tok-from-file',
    });
    expect(resolveSourceAuth({ name: 'apps' })).toBeUndefined();
    expect(() => resolveSourceAuth({ name: 'apps', auth: { tokenEnv: 'NOPE' } }, {})).toThrow(
      /source apps token is not available: environment variable NOPE is not set/,
    );
  });
});

describe('secrets in the configuration (issue 26)', () => {
  it('refuses an inline secret shorter than 16 characters, naming its key; files and env are not checked', () => {
    const file = tempFile(
      [
        'webhooks: { github: { secret: short }, generic: { secretEnv: HOOK } }',
        'sources:',
        '  - { name: apps, url: "https://git.example/a.git", auth: { username: git, password: pw, token: tok } }',
      ].join('\n'),
    );
    const problems = problemsOf(() => loadConfig({ file, env: {} })).join('\n');
    expect(problems).toMatch(/webhooks\.github\.secret: an inline secret must be at least 16 characters/);
    expect(problems).toMatch(/sources\[0\]\.auth\.password: an inline secret must be at least 16/);
    expect(problems).toMatch(/sources\[0\]\.auth\.token: an inline secret must be at least 16/);
    expect(problems).not.toMatch(/generic/);
    const long = tempFile('webhooks: { github: { secret: sixteen-chars-ok } }\n');
    expect(loadConfig({ file: long, env: {} }).webhooks.github?.secret).toBe('sixteen-chars-ok');
  });

  it('refuses credentials over plain http:// to a non-loopback host unless allowInsecureHttp is set', () => {
    const file = tempFile(
      [
        'sources:',
        '  - { name: a, url: "http://git.example/a.git", auth: { tokenEnv: GIT_TOKEN } }',
        '  - { name: b, url: "http://ci:0123456789abcdef@git.example/b.git" }',
        '  - { name: c, url: "http://127.0.0.1:3000/c.git", auth: { tokenEnv: GIT_TOKEN } }',
        '  - { name: d, url: "http://git.example/d.git" }',
        'promotions:',
        '  - name: p',
        '    from: { source: c }',
        '    to: { source: d }',
        '    pullRequest: { provider: gitea, apiUrl: "http://gitea.example/api/v1", repository: a/b, tokenEnv: T }',
      ].join('\n'),
    );
    const problems = problemsOf(() => loadConfig({ file, env: {} })).join('\n');
    expect(problems).toMatch(
      /sources\[0\]\.url: the source's credentials would be sent in clear over http:\/\/ to git\.example; use https:\/\/ or set sources\[0\]\.allowInsecureHttp: true/,
    );
    expect(problems).toMatch(/sources\[1\]\.url: the source's credentials would be sent in clear/);
    expect(problems).not.toMatch(/sources\[2\]|sources\[3\]/);
    expect(problems).toMatch(
      /promotions\[0\]\.pullRequest\.apiUrl: the pull-request token would be sent in clear over http:\/\/ to gitea\.example;.*promotions\[0\]\.pullRequest\.allowInsecureHttp: true/,
    );
    expect(problems).not.toContain('0123456789abcdef');
    const allowed = tempFile(
      [
        'sources:',
        '  - { name: a, url: "http://git.example/a.git", auth: { tokenEnv: GIT_TOKEN }, allowInsecureHttp: true }',
      ].join('\n'),
    );
    expect(loadConfig({ file: allowed, env: {} }).sources[0]?.allowInsecureHttp).toBe(true);
  });
});
