// The webhook server end to end: real HTTP requests as each Git host sends them, real Redis, real poll queue.
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { PollQueue } from '../../../src/queue/poll-queue.ts';
import { bullPrefix } from '../../../src/queue/queue-names.ts';
import { startHttpServer, type RunningHttpServer } from '../../../src/server/http-server.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { createPushRouter, type WatchedSource } from '../../../src/server/push-router.ts';
import type { PushNotice, WebhookProviderName, WebhooksConfig } from '../../../src/server/webhook-types.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';
import {
  azureDevOpsEvent,
  bitbucketCloudPush,
  bitbucketServerPush,
  genericPush,
  giteaPush,
  githubMergedPr,
  githubPush,
  gitlabMerge,
  gitlabPush,
  type PushSpec,
  type WebhookRequest,
} from './webhook-requests.ts';

const HOOK_UUID = '{0f1e2d3c-4b5a-6978-8a9b-acbdcedf0011}';
const CONFIG: WebhooksConfig = {
  github: { secret: 'gh-secret' },
  gitlab: { secret: 'gl-token' },
  gitea: { secret: 'gt-secret' },
  bitbucket: { secret: 'bb-secret' },
  generic: { secret: 'generic-secret' },
};

interface ProviderCase {
  label: string;
  provider: WebhookProviderName;
  secret: string;
  source: WatchedSource;
  request: (spec: PushSpec) => WebhookRequest;
  /** The server's webhook configuration for this case, when not CONFIG. */
  webhooks?: WebhooksConfig;
}

const CASES: ProviderCase[] = [
  {
    label: 'github',
    provider: 'github',
    secret: 'gh-secret',
    source: { name: 'gh-apps', url: 'https://ci-bot:token@GitHub.example/acme/apps/', branch: 'main' },
    request: (spec) =>
      githubPush(
        {
          clone: 'https://github.example/acme/apps.git',
          html: 'https://github.example/acme/apps',
          ssh: 'git@github.example:acme/apps.git',
        },
        spec,
      ),
  },
  {
    label: 'gitlab',
    provider: 'gitlab',
    secret: 'gl-token',
    source: { name: 'gl-infra', url: 'http://gitlab.example/acme/infra', branch: 'main' },
    request: (spec) =>
      gitlabPush(
        {
          http: 'https://gitlab.example/acme/infra.git',
          ssh: 'git@gitlab.example:acme/infra.git',
          web: 'https://gitlab.example/acme/infra',
        },
        spec,
      ),
  },
  {
    label: 'gitea',
    provider: 'gitea',
    secret: 'gt-secret',
    source: { name: 'gitea-platform', url: 'http://127.0.0.1:3000/acme/platform.git', branch: 'main' },
    request: (spec) =>
      giteaPush(
        { clone: 'http://127.0.0.1:3000/acme/platform.git', html: 'http://127.0.0.1:3000/acme/platform' },
        spec,
      ),
  },
  {
    label: 'forgejo (gitea endpoint)',
    provider: 'gitea',
    secret: 'gt-secret',
    source: { name: 'gitea-platform', url: 'http://127.0.0.1:3000/acme/platform.git', branch: 'main' },
    request: (spec) =>
      giteaPush(
        { clone: 'http://127.0.0.1:3000/acme/platform.git', html: 'http://127.0.0.1:3000/acme/platform' },
        { ...spec, forgejo: true },
      ),
  },
  {
    label: 'bitbucket server',
    provider: 'bitbucket',
    secret: 'bb-secret',
    source: { name: 'bb-deploy', url: 'ssh://git@bitbucket.example:7999/ops/deploy.git', branch: 'main' },
    request: (spec) =>
      bitbucketServerPush(
        {
          http: 'https://bitbucket.example/scm/ops/deploy.git',
          ssh: 'ssh://git@bitbucket.example:7999/ops/deploy.git',
        },
        spec,
      ),
  },
  {
    label: 'bitbucket cloud (hook uuid)',
    provider: 'bitbucket',
    secret: HOOK_UUID,
    source: { name: 'bbc-web', url: 'https://bitbucket.org/acme/web.git', branch: 'main' },
    request: (spec) => bitbucketCloudPush({ fullName: 'acme/web' }, spec),
    // Hook UUIDs identify Cloud hooks only where no secret is configured (a secret requires signatures).
    webhooks: { ...CONFIG, bitbucket: { hookUuid: HOOK_UUID.toUpperCase() } },
  },
  {
    label: 'generic',
    provider: 'generic',
    secret: 'generic-secret',
    source: { name: 'generic-repo', url: 'https://git.example/acme/generic.git', branch: 'main' },
    request: (spec) => genericPush('https://git.example/acme/generic', spec),
  },
];

const SOURCES: WatchedSource[] = [
  ...new Map(CASES.map((c) => [c.source.name, c.source])).values(),
  { name: 'gh-apps-staging', url: 'https://github.example/acme/apps.git', branch: 'staging' },
  { name: 'ado-deploy', url: 'https://dev.azure.com/acme/ops/_git/deploy', branch: 'main' },
];

let scope: RedisTestScope;
let pollQueue: PollQueue;
let server: RunningHttpServer;
let notices: PushNotice[];

async function start(webhooks: WebhooksConfig): Promise<RunningHttpServer> {
  const router = createPushRouter({ sources: SOURCES, pollQueue });
  return startHttpServer({
    port: 0,
    host: '127.0.0.1',
    webhooks,
    redis: scope.connection,
    prefix: scope.prefix,
    metrics: createRollgateMetrics({ processMetrics: false }),
    onPush: async (notice) => {
      notices.push(notice);
      return router(notice);
    },
  });
}

async function send(
  path: string,
  req: WebhookRequest,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: req.headers, body: req.body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function queuedPolls(): Promise<Array<{ source: string; reason: string }>> {
  const jobs = await pollQueue.queue.getJobs(['waiting', 'delayed', 'active']);
  return jobs.map((j) => j.data as { source: string; reason: string });
}

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
  pollQueue = new PollQueue({ connection: scope.connection, prefix: scope.prefix });
  notices = [];
  server = await start(CONFIG);
});

afterEach(async () => {
  await server.stop();
  await pollQueue.close();
  await scope.cleanup();
});

describe.each(CASES)('POST /webhooks/$provider from $label', (c) => {
  const path = `/webhooks/${c.provider}`;
  beforeEach(async () => {
    if (c.webhooks === undefined) return;
    await server.stop();
    server = await start(c.webhooks);
  });

  it('accepts a correctly signed push with 202 and enqueues a poll of the tracked source', async () => {
    const res = await send(path, c.request({ branch: 'main', secret: c.secret }));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'accepted', sourcesQueued: [c.source.name] });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ provider: c.provider, branch: 'main', cause: 'push' });
    expect(await queuedPolls()).toEqual([{ v: 1, source: c.source.name, reason: 'webhook' }]);
  });

  it('answers 503 at once while Redis is unreachable, so the forge redelivers instead of timing out', async () => {
    // A server whose Redis never answers (nothing listens on port 1); the shared one is left alone.
    const unreachable = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: null,
      retryStrategy: () => 60_000,
    });
    unreachable.on('error', () => undefined);
    await new Promise((resolve) => unreachable.once('reconnecting', resolve));
    const cut = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      webhooks: c.webhooks ?? CONFIG,
      redis: unreachable,
      prefix: scope.prefix,
      metrics: createRollgateMetrics({ processMetrics: false }),
      onPush: async (notice) => {
        notices.push(notice);
        return { sourcesQueued: [] };
      },
    });
    try {
      const req = c.request({ branch: 'main', secret: c.secret });
      const started = performance.now();
      const res = await fetch(`${cut.url}${path}`, { method: 'POST', headers: req.headers, body: req.body });
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ status: 'error', reason: expect.stringContaining('Redis') });
      expect(notices).toHaveLength(0);
    } finally {
      await cut.stop();
      unreachable.disconnect();
    }
  });

  it('refuses a bad signature with 401 and enqueues nothing', async () => {
    const wrong =
      c.provider === 'bitbucket' && c.secret === HOOK_UUID
        ? '{00000000-0000-0000-0000-000000000000}'
        : 'wrong';
    const res = await send(path, c.request({ branch: 'main', secret: wrong }));
    expect(res.status).toBe(401);
    expect(res.body.status).toBe('refused');
    expect(JSON.stringify(res.body)).not.toContain(c.secret);
    expect(notices).toHaveLength(0);
    expect(await queuedPolls()).toEqual([]);
  });

  it('ignores a repeated delivery id', async () => {
    const first = await send(path, c.request({ branch: 'main', secret: c.secret, deliveryId: 'delivery-1' }));
    const again = await send(path, c.request({ branch: 'main', secret: c.secret, deliveryId: 'delivery-1' }));
    expect(first.status).toBe(202);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'duplicate', deliveryId: 'delivery-1' });
    expect(notices).toHaveLength(1);
    // Remembered for 24 h, under the installation's prefix (docs/webhooks.md).
    const ttl = await scope.connection.ttl(
      `${bullPrefix(scope.prefix)}:webhook-delivery:${c.provider}:delivery-1`,
    );
    expect(ttl).toBeGreaterThan(86_400 - 60);
    expect(ttl).toBeLessThanOrEqual(86_400);
  });

  it('answers 202 for a push to an untracked branch but enqueues nothing', async () => {
    const res = await send(path, c.request({ branch: 'feature/x', secret: c.secret }));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'accepted', sourcesQueued: [] });
    expect(await queuedPolls()).toEqual([]);
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const big = `{"pad":"${'x'.repeat(1024 * 1024 - 9)}"}`;
    expect(Buffer.byteLength(big)).toBe(1024 * 1024 + 1);
    const res = await send(path, c.request({ branch: 'main', secret: c.secret, body: big }));
    expect(res.status).toBe(413);
    expect(notices).toHaveLength(0);
  });

  it('accepts a body of exactly 1 MiB (limit is inclusive) and reads it', async () => {
    const body = `{"pad":"${'x'.repeat(1024 * 1024 - 10)}"}`;
    expect(Buffer.byteLength(body)).toBe(1024 * 1024);
    const res = await send(path, c.request({ branch: 'main', secret: c.secret, body }));
    // Read whole, verified and parsed: refused only because a padding object is not a push.
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'refused' });
    expect(res.body.reason).not.toBe('body is not valid JSON');
  });

  it('refuses malformed JSON with 400', async () => {
    const res = await send(
      path,
      c.request({ branch: 'main', secret: c.secret, body: '{"ref": "refs/heads/ma' }),
    );
    expect(res.status).toBe(400);
    expect(res.body.reason).toContain('JSON');
    expect(notices).toHaveLength(0);
  });

  it('refuses every delivery with 403 when the provider has no secret configured', async () => {
    await server.stop();
    server = await start({});
    const res = await send(path, c.request({ branch: 'main', secret: c.secret }));
    expect(res.status).toBe(403);
    expect(String(res.body.reason)).toContain(`webhook provider ${c.provider} has no secret configured`);
    expect(notices).toHaveLength(0);
    expect(await queuedPolls()).toEqual([]);
  });
});

describe('merged pull/merge requests', () => {
  const repo = { clone: 'https://github.example/acme/apps.git' };

  it('polls the base branch of a merged GitHub pull request, not of a closed unmerged one', async () => {
    const merged = await send(
      '/webhooks/github',
      githubMergedPr(repo, { branch: 'staging', secret: 'gh-secret', merged: true }),
    );
    expect(merged.status).toBe(202);
    expect(merged.body).toMatchObject({ sourcesQueued: ['gh-apps-staging'] });
    expect(notices[0]).toMatchObject({ branch: 'staging', cause: 'merge' });
    const closed = await send(
      '/webhooks/github',
      githubMergedPr(repo, { branch: 'main', secret: 'gh-secret', merged: false }),
    );
    expect(closed.status).toBe(202);
    expect(closed.body.status).toBe('ignored');
    expect(notices).toHaveLength(1);
  });

  it('polls the target branch of a merged GitLab merge request only on action merge', async () => {
    const project = { http: 'https://gitlab.example/acme/infra.git' };
    const opened = await send(
      '/webhooks/gitlab',
      gitlabMerge(project, { branch: 'main', secret: 'gl-token', action: 'open' }),
    );
    expect(opened.body.status).toBe('ignored');
    const merged = await send(
      '/webhooks/gitlab',
      gitlabMerge(project, { branch: 'main', secret: 'gl-token', action: 'merge' }),
    );
    expect(merged.status).toBe(202);
    expect(merged.body).toMatchObject({ sourcesQueued: ['gl-infra'] });
  });
});

describe('content types', () => {
  it('reads a GitHub push sent as application/x-www-form-urlencoded (JSON in payload=)', async () => {
    const github = CASES[0]!;
    const json = github.request({ branch: 'main', secret: 'gh-secret' }).body;
    const form = new URLSearchParams({ payload: json }).toString();
    const signed = github.request({ branch: 'main', secret: 'gh-secret', body: form });
    const res = await send('/webhooks/github', {
      headers: { ...signed.headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'accepted', sourcesQueued: [github.source.name] });
  });
});

describe('coalescing', () => {
  it('turns a burst of 50 signed pushes into one pending poll', async () => {
    const results = await Promise.all(
      // Fifty pushes, fifty commits: the same signed body twice would be one delivery (a replay).
      Array.from({ length: 50 }, (_, i) =>
        send(
          '/webhooks/github',
          CASES[0]!.request({ branch: 'main', secret: 'gh-secret', after: i.toString(16).padStart(40, '0') }),
        ),
      ),
    );
    expect(results.every((r) => r.status === 202)).toBe(true);
    expect(notices).toHaveLength(50);
    expect(await queuedPolls()).toHaveLength(1);
  });
});

describe('POST /webhooks/azure-devops (service hook with basic credentials)', () => {
  const repo = {
    remoteUrl: 'https://acme@dev.azure.com/acme/ops/_git/deploy',
    webUrl: 'https://dev.azure.com/acme/ops/_git/deploy',
  };
  const path = '/webhooks/azure-devops';
  const azure = { 'azure-devops': { secret: 'ado-secret', username: 'rollgate' } };

  beforeEach(async () => {
    await server.stop();
    server = await start({ ...CONFIG, ...azure });
  });

  it('accepts a git.push with the right credentials and polls the source; the same notification again is a replay', async () => {
    const request = azureDevOpsEvent(repo, { branch: 'main', secret: 'ado-secret' });
    const res = await send(path, request);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'accepted', sourcesQueued: ['ado-deploy'] });
    expect(notices[0]).toMatchObject({ provider: 'azure-devops', branch: 'main', cause: 'push' });
    const again = await send(path, request);
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('duplicate');
    expect(await queuedPolls()).toEqual([{ v: 1, source: 'ado-deploy', reason: 'webhook' }]);
  });

  it('polls the target branch of a completed pull request, and ignores one still active', async () => {
    const active = await send(
      path,
      azureDevOpsEvent(repo, { branch: 'main', secret: 'ado-secret', merged: { status: 'active' } }),
    );
    expect(active.status).toBe(202);
    expect(active.body.status).toBe('ignored');
    const completed = await send(
      path,
      azureDevOpsEvent(repo, { branch: 'main', secret: 'ado-secret', merged: { status: 'completed' } }),
    );
    expect(completed.status).toBe(202);
    expect(notices).toEqual([expect.objectContaining({ branch: 'main', cause: 'merge' })]);
  });

  it.each([
    ['no credentials', { authorization: '' }, 'missing Authorization header'],
    ['a wrong password', { secret: 'wrong' }, 'basic credentials do not match webhooks.azure-devops'],
    ['another user name', { user: 'someone' }, 'basic credentials do not match webhooks.azure-devops'],
    ['a bearer token', { authorization: 'Bearer ado-secret' }, 'not HTTP basic credentials'],
  ])('refuses %s with 401, saying why and never echoing the secret', async (_what, change, reason) => {
    const request = azureDevOpsEvent(repo, {
      branch: 'main',
      secret: 'secret' in change ? change.secret : 'ado-secret',
      ...('user' in change ? { user: change.user } : {}),
    });
    const headers: Record<string, string> = { ...request.headers };
    if ('authorization' in change) {
      if (change.authorization === '') delete headers.authorization;
      else headers.authorization = change.authorization;
    }
    const res = await send(path, { headers, body: request.body });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ provider: 'azure-devops', status: 'refused' });
    expect(String(res.body.reason)).toContain(reason);
    expect(JSON.stringify(res.body)).not.toContain('ado-secret');
    expect(notices).toHaveLength(0);
  });

  it('refuses a git.push without refUpdates with 400 naming what is missing', async () => {
    const res = await send(
      path,
      azureDevOpsEvent(repo, {
        branch: 'main',
        secret: 'ado-secret',
        body: JSON.stringify({ eventType: 'git.push', resource: { repository: repo } }),
      }),
    );
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe('git.push payload without resource.refUpdates or resource.repository');
    expect(notices).toHaveLength(0);
  });

  it('refuses every delivery with 403 when webhooks.azure-devops has no secret', async () => {
    await server.stop();
    server = await start(CONFIG);
    const res = await send(path, azureDevOpsEvent(repo, { branch: 'main', secret: 'ado-secret' }));
    expect(res.status).toBe(403);
    expect(String(res.body.reason)).toContain('webhook provider azure-devops has no secret configured');
  });
});

describe('POST /webhooks/PROVIDER/NAMESPACE/NAME, a GitSource’s own receiver', () => {
  const TENANT_SECRET = 'team-a-webhook-secret-0123';
  // Two sources on one repository and branch: the configuration's and team-a's GitSource.
  const apps: WatchedSource = {
    name: 'platform-apps',
    url: 'https://github.example/acme/apps.git',
    branch: 'main',
  };
  const tenant: WatchedSource = {
    name: 'team-a.apps',
    url: 'https://github.example/acme/apps',
    branch: 'main',
  };
  const request = (spec: PushSpec): WebhookRequest =>
    githubPush(
      {
        clone: 'https://github.example/acme/apps.git',
        html: 'https://github.example/acme/apps',
        ssh: 'git@github.example:acme/apps.git',
      },
      spec,
    );

  beforeEach(async () => {
    await server.stop();
    const router = createPushRouter({ sources: [apps, tenant], pollQueue });
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      webhooks: CONFIG,
      sourceWebhooks: (namespace, name) =>
        namespace === 'team-a' && name === 'apps'
          ? { source: tenant.name, secret: TENANT_SECRET }
          : undefined,
      redis: scope.connection,
      prefix: scope.prefix,
      metrics: createRollgateMetrics({ processMetrics: false }),
      onPush: async (notice) => {
        notices.push(notice);
        return router(notice);
      },
    });
  });

  it('accepts a push signed with the GitSource’s secret and polls that source only', async () => {
    const res = await send(
      '/webhooks/github/team-a/apps',
      request({ branch: 'main', secret: TENANT_SECRET }),
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'accepted', sourcesQueued: ['team-a.apps'] });
    expect(await queuedPolls()).toEqual([{ v: 1, source: 'team-a.apps', reason: 'webhook' }]);
  });

  it('refuses the configuration’s secret there, and the GitSource’s secret on the configuration’s receiver', async () => {
    const platformSigned = await send(
      '/webhooks/github/team-a/apps',
      request({ branch: 'main', secret: 'gh-secret' }),
    );
    expect(platformSigned.status).toBe(401);
    const tenantSigned = await send('/webhooks/github', request({ branch: 'main', secret: TENANT_SECRET }));
    expect(tenantSigned.status).toBe(401);
    expect(await queuedPolls()).toEqual([]);
  });

  it('answers 404 for a GitSource without a receiver, naming what it needs, and reads no body', async () => {
    const res = await send(
      '/webhooks/github/team-b/apps',
      request({ branch: 'main', secret: TENANT_SECRET }),
    );
    expect(res.status).toBe(404);
    expect(res.body.error).toContain('spec.webhook.secretRef');
    expect(notices).toEqual([]);
  });

  it('takes one push delivered to both receivers as two deliveries, not a replay', async () => {
    const body = request({ branch: 'main', secret: 'gh-secret' });
    const both = [
      await send('/webhooks/github', body),
      await send('/webhooks/github/team-a/apps', {
        ...body,
        headers: {
          ...body.headers,
          'x-hub-signature-256': request({ branch: 'main', secret: TENANT_SECRET, body: body.body }).headers[
            'x-hub-signature-256'
          ]!,
        },
      }),
    ];
    expect(both.map((r) => r.status)).toEqual([202, 202]);
    expect(both[1]!.body).toMatchObject({ status: 'accepted', sourcesQueued: ['team-a.apps'] });
    // A replay of the tenant's delivery is still one.
    const again = await send(
      '/webhooks/github/team-a/apps',
      request({ branch: 'main', secret: TENANT_SECRET, body: body.body }),
    );
    expect(again.body).toMatchObject({ status: 'duplicate' });
  });

  it('is no receiver at a path that is not a namespace and a name', async () => {
    const res = await send(
      '/webhooks/github/Team_A/apps',
      request({ branch: 'main', secret: TENANT_SECRET }),
    );
    expect(res.status).toBe(405);
    expect(notices).toEqual([]);
  });
});
