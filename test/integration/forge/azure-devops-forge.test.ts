// AzureDevOpsForge against the forge double's Azure DevOps API: the shared contract, plus what only Azure DevOps has
// (status genre/name, closed comment threads, completion guarded by the verified source commit, drafts, git.push
// service hooks with basic credentials, Microsoft's published description as the judge).
import { describe, expect, it } from 'vitest';
import type { ForgeOptions } from '../../../src/forge/forge.ts';
import type { ForgeError } from '../../../src/forge/forge-error.ts';
import { AzureDevOpsForge } from '../../../src/forge/azure-devops-forge.ts';
import { azureDevOpsProvider } from '../../../src/server/webhook-providers/azure-devops.ts';
import { runForgeContract } from '../../support/forge-contract.ts';
import { AzureDevOpsApi } from '../../support/forge-double/azure-devops-api.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { mountedApiControls, sharedMountedDouble } from '../../support/forge-double/mounted-api.ts';
import { branchMaker, repositoryProbes } from '../../support/forge-double/repository-probes.ts';
import { startHookReceiver } from '../../support/hook-receiver.ts';

const REPO = 'acme/deploy';
const TOKEN = 'azure-devops-double-pat-0123456789abcdef';

interface AzureDouble {
  double: ForgeDouble;
  api: AzureDevOpsApi;
  reviewer: string;
  forge(overrides?: Partial<ForgeOptions>): AzureDevOpsForge;
}

async function startAzureDouble(): Promise<AzureDouble> {
  const double = await startForgeDouble();
  const api = new AzureDevOpsApi(double);
  double.mount('/azure', api.handle);
  double.addToken(TOKEN, { user: double.bot });
  await double.createRepository(REPO, { files: { 'env/prod/web.yaml': 'image: web:1\n' } });
  const reviewer = api.identityId(double.addUser('release-manager'));
  return {
    double,
    api,
    reviewer,
    forge: (overrides = {}) =>
      new AzureDevOpsForge({
        provider: 'azure-devops',
        apiUrl: `${double.url}/azure/org`,
        repository: REPO,
        token: TOKEN,
        sleep: async () => undefined,
        ...overrides,
      }),
  };
}

const STATE_NAMES: Record<string, string> = {
  pending: 'pending',
  succeeded: 'success',
  failed: 'failure',
  error: 'error',
};

runForgeContract('Azure DevOps', async () => {
  const { double, api, forge, reviewer } = await startAzureDouble();
  return {
    forge,
    token: TOKEN,
    baseBranch: 'main',
    missingRepository: 'acme/missing',
    reviewer,
    ...repositoryProbes(double, REPO),
    addExternalCheck: async (sha, name, state) => api.addExternalStatus(REPO, sha, name, state),
    postedStatuses: async (sha) =>
      api
        .postedStatuses(REPO, sha)
        .map((s) => ({ context: s.context, state: STATE_NAMES[s.state] ?? s.state })),
    ...mountedApiControls(double, api),
  };
});

describe('AzureDevOpsForge: Azure DevOps specifics', () => {
  const az = sharedMountedDouble(startAzureDouble, (started) => ({
    double: started.double,
    api: started.api,
  }));
  const branch = branchMaker(() => az().double, REPO);

  it('posts rollgate/<source> as genre rollgate, name <source>, and reads it back by that context', async () => {
    const head = await branch();
    const forge = az().forge();
    await forge.setCommitStatus({
      sha: head.sha,
      state: 'success',
      context: 'rollgate/prod',
      description: 'healthy',
    });
    const response = await fetch(
      `${az().double.url}/azure/org/acme/_apis/git/repositories/deploy/commits/${head.sha}/statuses?api-version=7.1`,
      { headers: { authorization: `Basic ${Buffer.from(`:${TOKEN}`).toString('base64')}` } },
    );
    const { value } = (await response.json()) as { value: Array<{ state: string; context: unknown }> };
    expect(value).toEqual([
      expect.objectContaining({ state: 'succeeded', context: { genre: 'rollgate', name: 'prod' } }),
    ]);
    await forge.setCommitStatus({
      sha: head.sha,
      state: 'success',
      context: 'rollgate/prod',
      description: 'healthy',
    });
    expect(az().api.postedStatuses(REPO, head.sha)).toHaveLength(1);
  });

  it('opens a draft that Azure DevOps will not complete, and completes it once marked ready', async () => {
    const head = await branch();
    const forge = az().forge();
    const draft = await forge.openPullRequest({
      head: head.name,
      base: 'main',
      title: 'draft',
      body: '',
      draft: true,
    });
    expect(draft.draft).toBe(true);
    const refused = (await forge.merge(draft.number, head.sha).catch((e: unknown) => e)) as ForgeError;
    expect(refused.code).toBe('forge.conflict');
    az().double.repository(REPO).pulls.get(draft.number)!.draft = false;
    const { mergeCommitSha } = await forge.merge(draft.number, head.sha);
    expect(await az().double.branchSha(REPO, 'main')).toBe(mergeCommitSha);
  });

  it('sends git.push service hooks on completion that Rollgate authenticates and reads as a push to the base', async () => {
    const secret = 'azure-hook-password';
    const receiver = await startHookReceiver();
    try {
      az().api.sendPushHooks();
      az().api.onWebhook(receiver.url('/webhooks/azure-devops'), secret);
      const head = await branch();
      const forge = az().forge();
      const opened = await forge.openPullRequest({ head: head.name, base: 'main', title: 'hook', body: '' });
      await forge.merge(opened.number, head.sha);
      await az().api.hooks.flush();
      const onMain = receiver.received.filter(
        (d) =>
          (JSON.parse(d.body.toString('utf8')) as { resource: { refUpdates: Array<{ name: string }> } })
            .resource.refUpdates[0]?.name === 'refs/heads/main',
      );
      expect(onMain).toHaveLength(1);
      const [delivery] = onMain;
      if (!delivery) throw new Error('no delivery');
      const config = { 'azure-devops': { secret, username: 'rollgate' } };
      expect(azureDevOpsProvider.verify(delivery.headers, delivery.body, config)).toEqual({ ok: true });
      expect(
        azureDevOpsProvider.verify(delivery.headers, delivery.body, { 'azure-devops': { secret: 'x' } }).ok,
      ).toBe(false);
      expect(
        azureDevOpsProvider.interpret(delivery.headers, JSON.parse(delivery.body.toString('utf8'))),
      ).toMatchObject({
        kind: 'push',
        branches: ['main'],
        repositoryUrls: expect.arrayContaining([`${az().double.url}/${REPO}.git`]) as unknown,
      });
    } finally {
      await receiver.close();
    }
  });

  it("records (and answers 400) a request that breaks Microsoft's published description", async () => {
    const response = await fetch(
      `${az().double.url}/azure/org/acme/_apis/git/repositories/deploy/pullrequests/1`,
      {
        method: 'PATCH',
        headers: {
          authorization: `Basic ${Buffer.from(`:${TOKEN}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          status: 'merged',
          completionOptions: { mergeStrategy: 'octopus' },
          sha: 'abc',
        }),
      },
    );
    expect(response.status).toBe(400);
    const problems = az().double.invalidRequests.flatMap((violation) => violation.problems);
    expect(problems).toEqual(
      expect.arrayContaining([
        'query/api-version: required',
        expect.stringContaining('body/status: must be equal to one of the allowed values'),
        expect.stringContaining(
          'body/completionOptions/mergeStrategy: must be equal to one of the allowed values',
        ),
        'body/sha: not a documented property',
      ]),
    );
    az().double.reset();
  });
});
