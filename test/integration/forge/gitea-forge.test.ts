// GiteaForge against the forge double's Gitea API: the shared contract, plus what only Gitea has (labels that must
// exist, organization labels, WIP drafts, signed pull_request webhooks, hand-checked request shapes).
import { describe, expect, it } from 'vitest';
import type { ForgeOptions } from '../../../src/forge/forge.ts';
import { ForgeError } from '../../../src/forge/forge-error.ts';
import { GiteaForge } from '../../../src/forge/gitea-forge.ts';
import { giteaProvider } from '../../../src/server/webhook-providers/gitea.ts';
import { runForgeContract } from '../../support/forge-contract.ts';
import { branchMaker, repositoryProbes } from '../../support/forge-double/repository-probes.ts';
import {
  mergeWithHookReceiver,
  mountedApiControls,
  sharedMountedDouble,
} from '../../support/forge-double/mounted-api.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { GiteaApi } from '../../support/forge-double/gitea-api.ts';

const REPO = 'acme/deploy';
const TOKEN = 'gitea-double-token-0123456789abcdef';

interface GiteaDouble {
  double: ForgeDouble;
  gitea: GiteaApi;
  forge(overrides?: Partial<ForgeOptions>): GiteaForge;
}

async function startGiteaDouble(): Promise<GiteaDouble> {
  const double = await startForgeDouble();
  const gitea = new GiteaApi(double);
  double.mount('/api/v1', gitea.handle);
  double.addToken(TOKEN, { user: double.bot });
  await double.createRepository(REPO, { files: { 'env/prod/web.yaml': 'image: web:1\n' } });
  gitea.addLabel(REPO, 'promotion');
  gitea.addOrgLabel('acme', 'rollgate');
  double.addUser('release-manager');
  return {
    double,
    gitea,
    forge: (overrides = {}) =>
      new GiteaForge({
        provider: 'gitea',
        apiUrl: `${double.url}/api/v1`,
        repository: REPO,
        token: TOKEN,
        sleep: async () => undefined,
        ...overrides,
      }),
  };
}

runForgeContract('Gitea / Forgejo', async () => {
  const { double, gitea, forge } = await startGiteaDouble();
  return {
    forge,
    token: TOKEN,
    baseBranch: 'main',
    missingRepository: 'acme/missing',
    ...repositoryProbes(double, REPO),
    addExternalCheck: async (sha, name, state) => gitea.addStatus(REPO, sha, name, state),
    postedStatuses: async (sha) => gitea.postedStatuses(REPO, sha),
    ...mountedApiControls(double, gitea),
  };
});

describe('GiteaForge: Gitea specifics', () => {
  const gt = sharedMountedDouble(startGiteaDouble, (started) => ({
    double: started.double,
    api: started.gitea,
  }));
  const branch = branchMaker(() => gt().double, REPO);

  it('sends a signed pull_request event on merge that Rollgate verifies and reads as a merge into the base', async () => {
    const secret = 'gitea-hook-secret';
    const { delivery, mergeCommitSha } = await mergeWithHookReceiver({
      api: gt().gitea,
      forge: gt().forge(),
      branch,
      path: '/webhooks/gitea',
      secret,
    });
    expect(delivery.headers['x-gitea-event']).toBe('pull_request');
    expect(giteaProvider.verify(delivery.headers, delivery.body, { gitea: { secret } } as never)).toEqual({
      ok: true,
    });
    expect(
      giteaProvider.verify(delivery.headers, delivery.body, { gitea: { secret: 'x' } } as never).ok,
    ).toBe(false);
    const payload = JSON.parse(delivery.body.toString('utf8')) as {
      action: string;
      pull_request: { merged: boolean; merge_commit_sha: string };
    };
    expect(payload.action).toBe('closed');
    expect(payload.pull_request).toMatchObject({ merged: true, merge_commit_sha: mergeCommitSha });
    expect(giteaProvider.interpret(delivery.headers, payload)).toMatchObject({
      kind: 'push',
      cause: 'merge',
      branches: ['main'],
    });
  });

  it('sends repository and organization labels as ids, and refuses a label that does not exist', async () => {
    const head = await branch();
    const forge = gt().forge();
    const opened = await forge.openPullRequest({
      head: head.name,
      base: 'main',
      title: 'labels',
      body: '',
      labels: ['Promotion', 'rollgate'],
    });
    expect(opened.labels.sort()).toEqual(['promotion', 'rollgate']);

    const other = await branch();
    const error = (await forge
      .openPullRequest({ head: other.name, base: 'main', title: 'x', body: '', labels: ['no-such-label'] })
      .catch((e: unknown) => e)) as ForgeError;
    expect(error).toBeInstanceOf(ForgeError);
    expect(error.code).toBe('forge.not_found');
    expect(await forge.findOpenPullRequest(other.name, 'main')).toBeUndefined();
  });

  it('opens a draft with the WIP: prefix, keeps it through an edit, and Gitea refuses to merge it', async () => {
    const head = await branch();
    const forge = gt().forge();
    const draft = await forge.openPullRequest({
      head: head.name,
      base: 'main',
      title: 'Promote web',
      body: 'a',
      draft: true,
    });
    expect(draft).toMatchObject({ title: 'Promote web', draft: true });
    expect(gt().double.repository(REPO).pulls.get(draft.number)?.title).toBe('WIP: Promote web');
    expect(await forge.updatePullRequest(draft.number, { title: 'Promote web v2', body: 'b' })).toMatchObject(
      {
        title: 'Promote web v2',
        draft: true,
      },
    );
    const refused = (await forge.merge(draft.number, head.sha).catch((e: unknown) => e)) as ForgeError;
    expect(refused.code).toBe('forge.conflict');
    expect(refused.context.status).toBe(405);
  });

  it('refuses an unknown reviewer before creating anything, and asks a known one', async () => {
    const head = await branch();
    const forge = gt().forge();
    const error = (await forge
      .openPullRequest({ head: head.name, base: 'main', title: 'x', body: '', reviewers: ['nobody-here'] })
      .catch((e: unknown) => e)) as ForgeError;
    expect(error.code).toBe('forge.not_found');
    expect(await forge.findOpenPullRequest(head.name, 'main')).toBeUndefined();
    const opened = await forge.openPullRequest({
      head: head.name,
      base: 'main',
      title: 'x',
      body: '',
      reviewers: ['release-manager'],
    });
    expect(gt().double.repository(REPO).pulls.get(opened.number)?.requestedReviewers).toEqual([
      'release-manager',
    ]);
  });

  it('counts a warning as passing and an error as failing', async () => {
    const head = await branch();
    const forge = gt().forge();
    gt().gitea.addStatus(REPO, head.sha, 'ci/lint', 'warning');
    expect(await forge.checksState(head.sha)).toBe('success');
    gt().gitea.addStatus(REPO, head.sha, 'ci/build', 'error');
    expect(await forge.checksState(head.sha)).toBe('failure');
  });

  it('reports merging a closed pull request as forge.conflict', async () => {
    const head = await branch();
    const forge = gt().forge();
    const opened = await forge.openPullRequest({ head: head.name, base: 'main', title: 'closed', body: '' });
    await forge.closePullRequest(opened.number);
    const error = (await forge.merge(opened.number, head.sha).catch((e: unknown) => e)) as ForgeError;
    expect(error.code).toBe('forge.conflict');
  });

  it('records (and answers 422) a request that breaks the documented option structs', async () => {
    const response = await fetch(`${gt().double.url}/api/v1/repos/${REPO}/pulls/1/merge`, {
      method: 'POST',
      headers: { authorization: `token ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ Do: 'octopus', sha: 'abc' }),
    });
    expect(response.status).toBe(422);
    const problems = gt().double.invalidRequests.flatMap((violation) => violation.problems);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('body/Do: must be one of merge'),
        'body/sha: not a documented parameter',
      ]),
    );
    gt().double.reset();
  });
});
