import { describe, expect, it } from 'vitest';
import type { ForgeError } from '../../../src/forge/forge-error.ts';
import { GiteaForge, giteaApiRoot, giteaChecksState } from '../../../src/forge/gitea-forge.ts';
import { scriptedForges } from './scripted-forge.ts';

const REPO = '/api/v1/repos/acme/deploy';
const SHA = 'a'.repeat(40);
const TOKEN = 'gitea-secret-token';

function pull(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 301,
    number: 4,
    html_url: 'https://gitea.example/acme/deploy/pulls/4',
    title: 'Promote web to prod',
    body: 'body',
    state: 'open',
    merged: false,
    merge_commit_sha: null,
    head: { ref: 'rollgate/promote/prod/web', sha: SHA, repo_id: 7 },
    base: { ref: 'main', sha: 'f'.repeat(40), repo_id: 7 },
    labels: [{ id: 1, name: 'promotion' }],
    ...overrides,
  };
}

const { forgeWith, requests, closeStub } = scriptedForges(
  (url, options) =>
    new GiteaForge({
      provider: 'gitea',
      apiUrl: `${url}/api/v1`,
      repository: 'acme/deploy',
      token: TOKEN,
      ...options,
    }),
);

describe('giteaApiRoot', () => {
  it.each([
    ['https://gitea.example/api/v1', 'https://gitea.example/api/v1'],
    ['https://gitea.example/api/v1/', 'https://gitea.example/api/v1'],
    ['https://gitea.example', 'https://gitea.example/api/v1'],
    ['https://example.org/git/', 'https://example.org/git/api/v1'],
  ])('%s → %s', (apiUrl, root) => {
    expect(giteaApiRoot(apiUrl)).toBe(root);
  });
});

describe('giteaChecksState', () => {
  it.each([
    [[], 'success'],
    [['success', 'warning'], 'success'],
    [['success', 'pending'], 'pending'],
    [['pending', 'error'], 'failure'],
    [['failure'], 'failure'],
  ])('%j → %s', (states, want) => {
    expect(giteaChecksState(states)).toBe(want);
  });
});

describe('GiteaForge', () => {
  it('refuses a repository that is not owner/name', () => {
    expect(
      () =>
        new GiteaForge({ provider: 'gitea', apiUrl: 'https://g.example', repository: 'a/b/c', token: 't' }),
    ).toThrow(/owner\/name/);
  });

  it('finds the open pull request by head and base on every page, skipping forks', async () => {
    const others = Array.from({ length: 50 }, (_, i) =>
      pull({ number: 100 + i, head: { ref: `other-${i}`, sha: SHA, repo_id: 7 } }),
    );
    const { forge } = await forgeWith((req) => {
      if (req.path !== `${REPO}/pulls`) return undefined;
      expect(req.query.get('state')).toBe('open');
      return req.query.get('page') === '1'
        ? { body: others }
        : {
            body: [
              pull({ number: 3, head: { ref: 'rollgate/promote/prod/web', sha: SHA, repo_id: 8 } }),
              pull(),
            ],
          };
    });
    const found = await forge.findOpenPullRequest('rollgate/promote/prod/web', 'main');
    expect(found?.number).toBe(4);
    expect(requests()[0]?.headers.authorization).toBe(`token ${TOKEN}`);
    expect(await forge.findOpenPullRequest('rollgate/promote/prod/web', 'release')).toBeUndefined();
  });

  it('opens a WIP pull request with label ids and asks the reviewers', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.path === `${REPO}/labels`) return { body: [{ id: 1, name: 'promotion', color: '#00ff00' }] };
      if (req.path === '/api/v1/orgs/acme/labels')
        return { body: [{ id: 9, name: 'prod', color: '#ff0000' }] };
      if (req.path === '/api/v1/users/alice') return { body: { id: 5, login: 'alice' } };
      if (req.method === 'POST' && req.path === `${REPO}/pulls`)
        return {
          status: 201,
          body: pull({
            title: 'WIP: Promote web to prod',
            labels: [
              { id: 1, name: 'promotion' },
              { id: 9, name: 'prod' },
            ],
          }),
        };
      if (req.method === 'POST' && req.path === `${REPO}/pulls/4/requested_reviewers`)
        return { status: 201, body: [] };
      return undefined;
    });
    const opened = await forge.openPullRequest({
      head: 'rollgate/promote/prod/web',
      base: 'main',
      title: 'Promote web to prod',
      body: 'body',
      labels: ['promotion', 'prod'],
      reviewers: ['alice'],
      draft: true,
    });
    expect(opened).toMatchObject({
      number: 4,
      title: 'Promote web to prod',
      draft: true,
      labels: ['promotion', 'prod'],
    });
    const create = requests().find((r) => r.method === 'POST' && r.path === `${REPO}/pulls`);
    expect(create?.body).toEqual({
      head: 'rollgate/promote/prod/web',
      base: 'main',
      title: 'WIP: Promote web to prod',
      body: 'body',
      labels: [1, 9],
    });
    expect(requests().at(-1)?.body).toEqual({ reviewers: ['alice'] });
  });

  it('refuses a label that does not exist before creating anything', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.path === `${REPO}/labels`) return { body: [] };
      if (req.path === '/api/v1/orgs/acme/labels') return { status: 404, body: { message: 'not found' } };
      return undefined;
    });
    const error = (await forge
      .openPullRequest({ head: 'h', base: 'main', title: 't', body: 'b', labels: ['missing'] })
      .catch((e: unknown) => e)) as ForgeError;
    expect(error.code).toBe('forge.not_found');
    expect(error.message).toMatch(/no label "missing"/);
    expect(requests().some((r) => r.method === 'POST')).toBe(false);
  });

  it('reports an open pull request for the same branches (409) as forge.conflict', async () => {
    const { forge } = await forgeWith((req) =>
      req.method === 'POST'
        ? { status: 409, body: { message: 'pull request already exists for these targets' } }
        : undefined,
    );
    await expect(
      forge.openPullRequest({ head: 'rollgate/promote/prod/web', base: 'main', title: 't', body: 'b' }),
    ).rejects.toMatchObject({ code: 'forge.conflict' });
  });

  it('edits title and body, keeping the WIP prefix', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.method === 'GET') return { body: pull({ title: '[WIP] Old' }) };
      if (req.method === 'PATCH') return { body: pull({ title: 'WIP: New', body: 'new' }) };
      return undefined;
    });
    const edited = await forge.updatePullRequest(4, { title: 'New', body: 'new' });
    expect(edited).toMatchObject({ title: 'New', body: 'new', draft: true });
    expect(requests()[1]?.body).toEqual({ title: 'WIP: New', body: 'new' });
  });

  it('comments on the issue thread then closes', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.method === 'GET') return { body: pull() };
      if (req.method === 'POST' && req.path === `${REPO}/issues/4/comments`)
        return { status: 201, body: { id: 1 } };
      if (req.method === 'PATCH') return { body: pull({ state: 'closed' }) };
      return undefined;
    });
    await forge.closePullRequest(4, 'superseded');
    expect(requests().map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${REPO}/pulls/4`,
      `POST ${REPO}/issues/4/comments`,
      `PATCH ${REPO}/pulls/4`,
    ]);
    expect(requests()[1]?.body).toEqual({ body: 'superseded' });
    expect(requests()[2]?.body).toEqual({ state: 'closed' });
  });

  it('posts a status unless the same one is the latest, and combines the latest statuses', async () => {
    const posted: unknown[] = [];
    const { forge } = await forgeWith((req) => {
      if (req.path === `${REPO}/commits/${SHA}/status`)
        return {
          body: {
            state: 'pending',
            sha: SHA,
            total_count: 2,
            statuses: [
              { id: 2, status: 'pending', context: 'ci/build', description: 'running', target_url: '' },
              {
                id: 1,
                status: 'success',
                context: 'rollgate/staging',
                description: 'healthy',
                target_url: '',
              },
            ],
          },
        };
      if (req.method === 'POST' && req.path === `${REPO}/statuses/${SHA}`) {
        posted.push(req.body);
        return { status: 201, body: { id: 3 } };
      }
      return undefined;
    });
    await forge.setCommitStatus({
      sha: SHA,
      state: 'success',
      context: 'rollgate/staging',
      description: 'healthy',
    });
    expect(posted).toEqual([]);
    await forge.setCommitStatus({
      sha: SHA,
      state: 'failure',
      context: 'rollgate/staging',
      description: 'aborted',
    });
    expect(posted).toEqual([{ state: 'failure', context: 'rollgate/staging', description: 'aborted' }]);
    expect(await forge.checksState(SHA)).toBe('pending');
  });

  it('merges with head_commit_id and reads the merge commit from the pull request', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.method === 'POST' && req.path === `${REPO}/pulls/4/merge`) return { status: 200 };
      if (req.method === 'GET')
        return { body: pull({ state: 'closed', merged: true, merge_commit_sha: 'b'.repeat(40) }) };
      return undefined;
    });
    expect(await forge.merge(4, SHA)).toEqual({ mergeCommitSha: 'b'.repeat(40) });
    expect(requests()[0]?.body).toEqual({ Do: 'merge', head_commit_id: SHA });
  });

  it('refuses a merge whose head moved (409) or that cannot merge (405) as forge.conflict', async () => {
    for (const status of [405, 409]) {
      const { forge } = await forgeWith((req) =>
        req.method === 'POST'
          ? { status, body: { message: 'no' } }
          : { body: pull({ head: { ref: 'x', sha: 'c'.repeat(40) } }) },
      );
      await expect(forge.merge(4, SHA)).rejects.toMatchObject({
        code: 'forge.conflict',
        context: { status },
      });
      await closeStub();
    }
  });

  it('reports merging a closed pull request (Gitea: 404) as forge.conflict, a missing one as forge.not_found', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.method === 'POST') return { status: 404, body: { message: 'not found' } };
      if (req.path === `${REPO}/pulls/4`) return { body: pull({ state: 'closed' }) };
      return { status: 404, body: { message: 'not found' } };
    });
    await expect(forge.merge(4, SHA)).rejects.toMatchObject({ code: 'forge.conflict' });
    await expect(forge.merge(5, SHA)).rejects.toMatchObject({ code: 'forge.not_found' });
  });

  it('retries a quota-exhausted 403 and maps a plain 403 to forge.unauthorized', async () => {
    let calls = 0;
    const limited = await forgeWith(() => {
      calls += 1;
      return calls === 1
        ? {
            status: 403,
            headers: { 'x-ratelimit-remaining': '0', 'retry-after': '2' },
            body: { message: 'rate' },
          }
        : { body: pull() };
    });
    expect((await limited.forge.getPullRequest(4)).number).toBe(4);
    expect(limited.slept).toEqual([2_000]);
    await closeStub();

    const denied = await forgeWith(() => ({
      status: 403,
      body: { message: 'token does not have scope write:repository' },
    }));
    const error = (await denied.forge.getPullRequest(4).catch((e: unknown) => e)) as ForgeError;
    expect(error.code).toBe('forge.unauthorized');
    expect(error.message).toContain('write:repository');
    expect(error.message).not.toContain(TOKEN);
  });

  it('gives up on repeated 429 as forge.rate_limited', async () => {
    const { forge, slept } = await forgeWith(() => ({ status: 429, body: { message: 'slow down' } }), 1);
    const error = (await forge.getPullRequest(4).catch((e: unknown) => e)) as ForgeError;
    expect(error.code).toBe('forge.rate_limited');
    expect(slept).toEqual([1_000]);
  });
});
