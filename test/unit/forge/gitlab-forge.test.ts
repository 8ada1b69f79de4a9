import { describe, expect, it } from 'vitest';
import { ForgeError } from '../../../src/forge/forge-error.ts';
import { GitLabForge, gitlabChecksState, gitlabHost } from '../../../src/forge/gitlab-forge.ts';
import { scriptedForges } from './scripted-forge.ts';

const PROJECT = '/api/v4/projects/group%2Fsub%2Fapp';
const SHA = 'a'.repeat(40);
const TOKEN = 'glpat-secret-token';

function mr(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 900,
    iid: 5,
    project_id: 42,
    title: 'Promote web to prod',
    description: 'body',
    state: 'opened',
    web_url: 'https://gitlab.example/group/sub/app/-/merge_requests/5',
    source_branch: 'rollgate/promote/prod/web',
    target_branch: 'main',
    source_project_id: 42,
    target_project_id: 42,
    sha: SHA,
    merge_commit_sha: null,
    squash_commit_sha: null,
    labels: ['promotion'],
    draft: false,
    work_in_progress: false,
    ...overrides,
  };
}

const { forgeWith, requests, closeStub, stubUrl } = scriptedForges(
  (url, options) =>
    new GitLabForge({
      provider: 'gitlab',
      apiUrl: `${url}/api/v4`,
      repository: 'group/sub/app',
      token: TOKEN,
      ...options,
    }),
);

describe('gitlabHost', () => {
  it.each([
    ['https://gitlab.example/api/v4', 'https://gitlab.example'],
    ['https://gitlab.example/api/v4/', 'https://gitlab.example'],
    ['https://example.org/gitlab/api/v4', 'https://example.org/gitlab'],
    ['https://gitlab.example', 'https://gitlab.example'],
    ['http://127.0.0.1:8080/api/v4', 'http://127.0.0.1:8080'],
  ])('%s → %s', (apiUrl, host) => {
    expect(gitlabHost(apiUrl)).toBe(host);
  });

  it('refuses another API version', () => {
    expect(() => gitlabHost('https://gitlab.example/api/v3')).toThrow(/only API v4/);
  });
});

describe('gitlabChecksState', () => {
  const rows: Array<{
    name: string;
    statuses: Array<{ status: string; allow_failure: boolean }>;
    pipeline?: string;
    required?: boolean;
    want: string;
  }> = [
    { name: 'nothing reported', statuses: [], want: 'success' },
    { name: 'nothing reported, pipeline required', statuses: [], required: true, want: 'pending' },
    {
      name: 'all passed',
      statuses: [{ status: 'success', allow_failure: false }],
      pipeline: 'success',
      want: 'success',
    },
    { name: 'a job runs', statuses: [{ status: 'running', allow_failure: false }], want: 'pending' },
    { name: 'a job failed', statuses: [{ status: 'failed', allow_failure: false }], want: 'failure' },
    { name: 'an allowed failure', statuses: [{ status: 'failed', allow_failure: true }], want: 'success' },
    { name: 'a canceled job', statuses: [{ status: 'canceled', allow_failure: false }], want: 'failure' },
    {
      name: 'a blocking manual job',
      statuses: [{ status: 'manual', allow_failure: false }],
      want: 'pending',
    },
    {
      name: 'an optional manual job',
      statuses: [{ status: 'manual', allow_failure: true }],
      want: 'success',
    },
    { name: 'skipped jobs', statuses: [{ status: 'skipped', allow_failure: false }], want: 'success' },
    { name: 'pipeline still created', statuses: [], pipeline: 'created', want: 'pending' },
    {
      name: 'pipeline failed',
      statuses: [{ status: 'success', allow_failure: false }],
      pipeline: 'failed',
      want: 'failure',
    },
    {
      name: 'a failure wins over waiting',
      statuses: [
        { status: 'pending', allow_failure: false },
        { status: 'failed', allow_failure: false },
      ],
      want: 'failure',
    },
  ];
  it.each(rows)('$name → $want', ({ statuses, pipeline, required, want }) => {
    expect(gitlabChecksState(statuses, pipeline, required ?? false)).toBe(want);
  });
});

describe('GitLabForge', () => {
  it('opens a draft merge request with labels and reviewers resolved to user ids', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.method === 'GET' && req.path === '/api/v4/users')
        return { body: [{ id: 77, username: req.query.get('username') }] };
      if (req.method === 'POST' && req.path === `${PROJECT}/merge_requests`)
        return {
          status: 201,
          body: mr({ title: 'Draft: Promote web to prod', draft: true, labels: ['promotion', 'prod'] }),
        };
      return undefined;
    });
    const opened = await forge.openPullRequest({
      head: 'rollgate/promote/prod/web',
      base: 'main',
      title: 'Promote web to prod',
      body: 'body',
      labels: ['promotion', 'prod'],
      reviewers: ['@alice'],
      draft: true,
    });
    expect(opened).toEqual({
      number: 5,
      url: 'https://gitlab.example/group/sub/app/-/merge_requests/5',
      title: 'Promote web to prod',
      body: 'body',
      state: 'open',
      head: 'rollgate/promote/prod/web',
      headSha: SHA,
      base: 'main',
      labels: ['promotion', 'prod'],
      draft: true,
    });
    const [lookup, create] = requests();
    expect(lookup?.query.get('username')).toBe('alice');
    expect(create?.headers['private-token']).toBe(TOKEN);
    expect(create?.body).toEqual({
      source_branch: 'rollgate/promote/prod/web',
      target_branch: 'main',
      title: 'Draft: Promote web to prod',
      description: 'body',
      labels: 'promotion,prod',
      reviewer_ids: [77],
    });
  });

  it('refuses an unknown reviewer before creating anything', async () => {
    const { forge } = await forgeWith((req) => (req.path === '/api/v4/users' ? { body: [] } : undefined));
    const error = await forge
      .openPullRequest({ head: 'h', base: 'main', title: 't', body: 'b', reviewers: ['nobody'] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForgeError);
    expect((error as ForgeError).code).toBe('forge.not_found');
    expect(requests().map((r) => r.method)).toEqual(['GET']);
  });

  it('reports an open merge request for the same branches as forge.conflict; finding adopts it', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.method === 'POST')
        return {
          status: 409,
          body: { message: ['Another open merge request already exists for this source branch: !5'] },
        };
      if (req.method === 'GET' && req.path === `${PROJECT}/merge_requests`) {
        if (req.query.get('state') !== 'opened' || req.query.get('target_branch') !== 'main')
          return { body: [] };
        return { body: [mr({ iid: 3, source_project_id: 99 }), mr()] };
      }
      return undefined;
    });
    const request = { head: 'rollgate/promote/prod/web', base: 'main', title: 'x', body: 'y' };
    await expect(forge.openPullRequest(request)).rejects.toMatchObject({
      code: 'forge.conflict',
      context: { status: 409 },
    });
    // The fork's merge request (source project 99) is not ours.
    expect((await forge.findOpenPullRequest(request.head, 'main'))?.number).toBe(5);
    expect(requests().at(-1)?.query.get('source_branch')).toBe('rollgate/promote/prod/web');
  });

  it('keeps the draft marker when it edits the title, and sends nothing when nothing changes', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.method === 'GET') return { body: mr({ title: 'Draft: Old', draft: true }) };
      if (req.method === 'PUT') return { body: mr({ title: 'Draft: New', description: 'new', draft: true }) };
      return undefined;
    });
    expect((await forge.updatePullRequest(5, { title: 'Old', body: 'body' })).title).toBe('Old');
    expect(requests().map((r) => r.method)).toEqual(['GET']);
    const updated = await forge.updatePullRequest(5, { title: 'New', body: 'new' });
    expect(updated.title).toBe('New');
    expect(requests()[2]?.body).toEqual({ title: 'Draft: New', description: 'new' });
  });

  it('comments then closes, and leaves a closed merge request alone', async () => {
    let state = 'opened';
    const { forge } = await forgeWith((req) => {
      if (req.method === 'GET') return { body: mr({ state }) };
      if (req.method === 'POST' && req.path === `${PROJECT}/merge_requests/5/notes`)
        return { status: 201, body: { id: 1, body: (req.body as { body: string }).body } };
      if (req.method === 'PUT') {
        state = 'closed';
        return { body: mr({ state }) };
      }
      return undefined;
    });
    await forge.closePullRequest(5, 'superseded');
    expect(requests().map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${PROJECT}/merge_requests/5`,
      `POST ${PROJECT}/merge_requests/5/notes`,
      `PUT ${PROJECT}/merge_requests/5`,
    ]);
    expect(requests()[2]?.body).toEqual({ state_event: 'close' });
    await forge.closePullRequest(5, 'again');
    expect(requests()).toHaveLength(4);
  });

  it('posts a commit status with GitLab state names, skipping one that is already there', async () => {
    const posted: unknown[] = [];
    const { forge } = await forgeWith((req) => {
      if (req.method === 'GET' && req.path === `${PROJECT}/repository/commits/${SHA}/statuses`)
        return {
          body: [
            {
              id: 1,
              name: 'rollgate/staging',
              status: 'failed',
              allow_failure: false,
              description: 'aborted',
              target_url: null,
            },
          ],
        };
      if (req.method === 'POST' && req.path === `${PROJECT}/statuses/${SHA}`) {
        posted.push(req.body);
        return { status: 201, body: { id: 2 } };
      }
      return undefined;
    });
    await forge.setCommitStatus({
      sha: SHA,
      state: 'error',
      context: 'rollgate/staging',
      description: 'aborted',
    });
    expect(posted).toEqual([]);
    await forge.setCommitStatus({
      sha: SHA,
      state: 'success',
      context: 'rollgate/staging',
      description: 'healthy',
      targetUrl: 'https://rollgate.example/r/1',
    });
    expect(posted).toEqual([
      {
        state: 'success',
        name: 'rollgate/staging',
        description: 'healthy',
        target_url: 'https://rollgate.example/r/1',
      },
    ]);
    expect(requests()[0]?.query.get('name')).toBe('rollgate/staging');
  });

  it('treats "Cannot transition status" on an unchanged state as done', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.method === 'GET')
        return {
          body: [{ id: 1, name: 'ctx', status: 'pending', allow_failure: false, description: 'old' }],
        };
      return { status: 400, body: { message: 'Cannot transition status via :enqueue from :pending' } };
    });
    await expect(
      forge.setCommitStatus({ sha: SHA, state: 'pending', context: 'ctx', description: 'new' }),
    ).resolves.toBeUndefined();
  });

  it('reads checks from every page of statuses and the newest pipeline', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.path === `${PROJECT}/repository/commits/${SHA}/statuses`) {
        if (req.query.get('page') === '2')
          return { body: [{ id: 2, name: 'b', status: 'running', allow_failure: false }] };
        return {
          headers: { link: `<${stubUrl()}${req.path}?page=2&per_page=1>; rel="next"` },
          body: [{ id: 1, name: 'a', status: 'success', allow_failure: false }],
        };
      }
      if (req.path === `${PROJECT}/pipelines`) return { body: [{ id: 9, status: 'success' }] };
      return undefined;
    });
    expect(await forge.checksState(SHA)).toBe('pending');
    const pipelineQuery = requests().find((r) => r.path.endsWith('/pipelines'))?.query;
    expect(Object.fromEntries(pipelineQuery ?? [])).toMatchObject({ sha: SHA, order_by: 'id', sort: 'desc' });
  });

  it('asks the project whether a pipeline is required when nothing was reported', async () => {
    const { forge } = await forgeWith((req) => {
      if (req.path === PROJECT) return { body: { id: 42, only_allow_merge_if_pipeline_succeeds: true } };
      return { body: [] };
    });
    expect(await forge.checksState(SHA)).toBe('pending');
  });

  it('merges guarded by the sha and returns the merge commit', async () => {
    const { forge } = await forgeWith((req) =>
      req.method === 'PUT' && req.path === `${PROJECT}/merge_requests/5/merge`
        ? { body: mr({ state: 'merged', merge_commit_sha: 'b'.repeat(40) }) }
        : undefined,
    );
    expect(await forge.merge(5, SHA)).toEqual({ mergeCommitSha: 'b'.repeat(40) });
    expect(requests()[0]?.body).toEqual({ sha: SHA });
  });

  it('refuses a merge whose head moved (409) as forge.conflict', async () => {
    const { forge } = await forgeWith((req) =>
      req.method === 'PUT'
        ? { status: 409, body: { message: 'SHA does not match HEAD of source branch: ' + 'c'.repeat(40) } }
        : { body: mr({ sha: 'c'.repeat(40) }) },
    );
    await expect(forge.merge(5, SHA)).rejects.toMatchObject({ code: 'forge.conflict' });
  });

  it('refuses merging a merge request that is merged already (405) as forge.conflict', async () => {
    const { forge } = await forgeWith(() => ({ status: 405, body: { message: '405 Method Not Allowed' } }));
    await expect(forge.merge(5, SHA)).rejects.toMatchObject({ code: 'forge.conflict' });
  });

  it('maps 401, 403 and 404 without retrying, and never shows the token', async () => {
    for (const [status, code] of [
      [401, 'forge.unauthorized'],
      [403, 'forge.unauthorized'],
      [404, 'forge.not_found'],
    ] as const) {
      const { forge } = await forgeWith(() => ({ status, body: { message: `${status} nope` } }));
      const error = (await forge.getPullRequest(5).catch((e: unknown) => e)) as ForgeError;
      expect(error.code).toBe(code);
      expect(error.context).toMatchObject({ provider: 'gitlab', repository: 'group/sub/app', status });
      expect(error.message).not.toContain(TOKEN);
      expect(requests()).toHaveLength(1);
      await closeStub();
    }
  });

  it('waits out a 429 with Retry-After, and gives up on 5xx as forge.unavailable', async () => {
    let calls = 0;
    const limited = await forgeWith(() => {
      calls += 1;
      return calls === 1
        ? { status: 429, headers: { 'retry-after': '3' }, body: { message: 'slow' } }
        : { body: mr() };
    });
    expect((await limited.forge.getPullRequest(5)).number).toBe(5);
    expect(limited.slept).toEqual([3_000]);
    await closeStub();

    const down = await forgeWith(() => ({ status: 502, body: 'Bad Gateway' }), 2);
    const error = (await down.forge.getPullRequest(5).catch((e: unknown) => e)) as ForgeError;
    expect(error.code).toBe('forge.unavailable');
    expect(error.transient).toBe(true);
    expect(requests()).toHaveLength(3);
    expect(down.slept).toEqual([1_000, 2_000]);
  });

  it('reports an answer of the wrong shape as forge.invalid_response', async () => {
    const { forge } = await forgeWith(() => ({ body: { iid: 'five' } }));
    await expect(forge.getPullRequest(5)).rejects.toMatchObject({ code: 'forge.invalid_response' });
  });

  it('reports a forge that is not there as forge.unavailable', async () => {
    const { forge } = await forgeWith(() => undefined, 0);
    await closeStub();
    await expect(forge.getPullRequest(5)).rejects.toMatchObject({ code: 'forge.unavailable' });
  });
});
