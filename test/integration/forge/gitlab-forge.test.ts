// GitLabForge against the forge double's GitLab API: the shared contract, plus what only GitLab has (project ids,
// drafts by title, "Pipelines must succeed", merge request webhooks, hand-checked request shapes).
import { describe, expect, it } from 'vitest';
import type { ForgeOptions } from '../../../src/forge/forge.ts';
import { ForgeError } from '../../../src/forge/forge-error.ts';
import { GitLabForge } from '../../../src/forge/gitlab-forge.ts';
import { gitlabProvider } from '../../../src/server/webhook-providers/gitlab.ts';
import { runForgeContract } from '../../support/forge-contract.ts';
import { branchMaker, repositoryProbes } from '../../support/forge-double/repository-probes.ts';
import {
  mergeWithHookReceiver,
  mountedApiControls,
  sharedMountedDouble,
} from '../../support/forge-double/mounted-api.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { GitLabApi } from '../../support/forge-double/gitlab-api.ts';

const REPO = 'acme/deploy';
const TOKEN = 'glpat-double-token';

interface GitLabDouble {
  double: ForgeDouble;
  gitlab: GitLabApi;
  forge(overrides?: Partial<ForgeOptions>): GitLabForge;
}

async function startGitLabDouble(): Promise<GitLabDouble> {
  const double = await startForgeDouble();
  const gitlab = new GitLabApi(double);
  double.mount('/api/v4', gitlab.handle);
  double.addToken(TOKEN, { user: double.bot });
  await double.createRepository(REPO, { files: { 'env/prod/web.yaml': 'image: web:1\n' } });
  double.addUser('release-manager');
  return {
    double,
    gitlab,
    forge: (overrides = {}) =>
      new GitLabForge({
        provider: 'gitlab',
        apiUrl: `${double.url}/api/v4`,
        repository: REPO,
        token: TOKEN,
        sleep: async () => undefined,
        ...overrides,
      }),
  };
}

runForgeContract('GitLab', async () => {
  const { double, gitlab, forge } = await startGitLabDouble();
  return {
    forge,
    token: TOKEN,
    baseBranch: 'main',
    missingRepository: 'acme/missing',
    ...repositoryProbes(double, REPO),
    addExternalCheck: (sha, name, state) =>
      gitlab.setJob(REPO, sha, name, state === 'failure' ? 'failed' : state),
    postedStatuses: async (sha) => gitlab.postedStatuses(REPO, sha),
    ...mountedApiControls(double, gitlab),
  };
});

describe('GitLabForge: GitLab specifics', () => {
  const gl = sharedMountedDouble(startGitLabDouble, (started) => ({
    double: started.double,
    api: started.gitlab,
  }));
  const branch = branchMaker(() => gl().double, REPO);

  it('sends a Merge Request Hook on merge that Rollgate verifies by X-Gitlab-Token and reads as a merge into the target', async () => {
    const secret = 'gitlab-hook-token';
    const { delivery, number, mergeCommitSha } = await mergeWithHookReceiver({
      api: gl().gitlab,
      forge: gl().forge(),
      branch,
      path: '/webhooks/gitlab',
      secret,
    });
    expect(delivery.headers['x-gitlab-event']).toBe('Merge Request Hook');
    expect(gitlabProvider.verify(delivery.headers, delivery.body, { gitlab: { secret } } as never)).toEqual({
      ok: true,
    });
    expect(
      gitlabProvider.verify(delivery.headers, delivery.body, { gitlab: { secret: 'x' } } as never).ok,
    ).toBe(false);
    const payload = JSON.parse(delivery.body.toString('utf8')) as {
      object_kind: string;
      object_attributes: { action: string; iid: number; merge_commit_sha: string };
    };
    expect(payload.object_kind).toBe('merge_request');
    expect(payload.object_attributes).toMatchObject({
      action: 'merge',
      iid: number,
      merge_commit_sha: mergeCommitSha,
    });
    expect(gitlabProvider.interpret(delivery.headers, payload)).toMatchObject({
      kind: 'push',
      cause: 'merge',
      branches: ['main'],
      repositoryUrls: expect.arrayContaining([`${gl().double.url}/${REPO}.git`]) as unknown,
    });
  });

  it('takes the numeric project id as the repository', async () => {
    const head = await branch();
    const opened = await gl()
      .forge()
      .openPullRequest({ head: head.name, base: 'main', title: 'by id', body: '' });
    const byId = gl().forge({ repository: String(gl().double.repository(REPO).id) });
    expect((await byId.getPullRequest(opened.number)).title).toBe('by id');
  });

  it('opens a draft with the Draft: prefix, keeps it through an edit, and GitLab refuses to merge it', async () => {
    const head = await branch();
    const forge = gl().forge();
    const draft = await forge.openPullRequest({
      head: head.name,
      base: 'main',
      title: 'Promote web',
      body: 'a',
      draft: true,
    });
    expect(draft).toMatchObject({ title: 'Promote web', draft: true });
    expect(gl().double.repository(REPO).pulls.get(draft.number)?.title).toBe('Draft: Promote web');
    const edited = await forge.updatePullRequest(draft.number, { title: 'Promote web v2', body: 'b' });
    expect(edited).toMatchObject({ title: 'Promote web v2', body: 'b', draft: true });
    const refused = (await forge.merge(draft.number, head.sha).catch((e: unknown) => e)) as ForgeError;
    expect(refused.code).toBe('forge.conflict');
    expect(refused.context.status).toBe(405);
  });

  it('refuses an unknown reviewer before creating anything', async () => {
    const head = await branch();
    const error = await gl()
      .forge()
      .openPullRequest({ head: head.name, base: 'main', title: 'x', body: '', reviewers: ['nobody-here'] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForgeError);
    expect((error as ForgeError).code).toBe('forge.not_found');
    expect(await gl().forge().findOpenPullRequest(head.name, 'main')).toBeUndefined();
  });

  it('waits for a pipeline when the project requires one, and merges once it passed', async () => {
    gl().gitlab.requirePipeline(REPO, true);
    try {
      const head = await branch();
      const forge = gl().forge();
      const opened = await forge.openPullRequest({ head: head.name, base: 'main', title: 'gated', body: '' });
      expect(await forge.checksState(head.sha)).toBe('pending');
      await expect(forge.merge(opened.number, head.sha)).rejects.toMatchObject({ code: 'forge.conflict' });
      await gl().gitlab.setJob(REPO, head.sha, 'test', 'running');
      expect(await forge.checksState(head.sha)).toBe('pending');
      await gl().gitlab.setJob(REPO, head.sha, 'test', 'success');
      expect(await forge.checksState(head.sha)).toBe('success');
      expect((await forge.merge(opened.number, head.sha)).mergeCommitSha).toBe(
        await gl().double.branchSha(REPO, 'main'),
      );
    } finally {
      gl().gitlab.requirePipeline(REPO, false);
    }
  });

  it('does not re-post a status that is already the latest (GitLab refuses pending → pending)', async () => {
    const head = await branch();
    const forge = gl().forge();
    const status = {
      sha: head.sha,
      state: 'pending' as const,
      context: 'rollgate/staging',
      description: 'canary',
    };
    await forge.setCommitStatus(status);
    await forge.setCommitStatus(status);
    await forge.setCommitStatus({ ...status, description: 'canary, step 2' });
    const posts = gl().double.requests.filter((r) => r.method === 'POST' && r.path.includes('/statuses/'));
    expect(posts.map((r) => r.status)).toEqual([201, 400]);
    expect(await forge.checksState(head.sha)).toBe('pending');
  });

  it('records (and answers 400) a request that breaks the documented parameters', async () => {
    const response = await fetch(`${gl().double.url}/api/v4/projects/acme%2Fdeploy/merge_requests`, {
      method: 'POST',
      headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ source_branch: 'a', title: 7, draft: true }),
    });
    expect(response.status).toBe(400);
    const problems = gl().double.invalidRequests.flatMap((violation) => violation.problems);
    expect(problems).toEqual(
      expect.arrayContaining([
        'body/title: must be a string',
        'body/draft: not a documented parameter',
        'body/target_branch: required',
      ]),
    );
    gl().double.reset();
  });
});
