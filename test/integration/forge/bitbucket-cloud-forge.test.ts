// BitbucketCloudForge against the forge double's Bitbucket Cloud API: the shared contract, plus what only Bitbucket
// Cloud has (12-character hashes, build statuses that need a link, repo:push webhooks, its published description).
import { describe, expect, it } from 'vitest';
import type { ForgeOptions } from '../../../src/forge/forge.ts';
import type { ForgeError } from '../../../src/forge/forge-error.ts';
import { BitbucketCloudForge } from '../../../src/forge/bitbucket-cloud-forge.ts';
import { bitbucketProvider } from '../../../src/server/webhook-providers/bitbucket.ts';
import { runForgeContract } from '../../support/forge-contract.ts';
import { BitbucketCloudApi } from '../../support/forge-double/bitbucket-cloud-api.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { mountedApiControls, sharedMountedDouble } from '../../support/forge-double/mounted-api.ts';
import { branchMaker, repositoryProbes } from '../../support/forge-double/repository-probes.ts';
import { startHookReceiver } from '../../support/hook-receiver.ts';

const REPO = 'acme/deploy';
const TOKEN = 'bitbucket-cloud-double-token-0123456789';

interface CloudDouble {
  double: ForgeDouble;
  api: BitbucketCloudApi;
  forge(overrides?: Partial<ForgeOptions>): BitbucketCloudForge;
}

async function startCloudDouble(): Promise<CloudDouble> {
  const double = await startForgeDouble();
  const api = new BitbucketCloudApi(double);
  double.mount('/2.0', api.handle);
  double.addToken(TOKEN, { user: double.bot });
  await double.createRepository(REPO, { files: { 'env/prod/web.yaml': 'image: web:1\n' } });
  double.addUser('release-manager');
  return {
    double,
    api,
    forge: (overrides = {}) =>
      new BitbucketCloudForge({
        provider: 'bitbucket-cloud',
        apiUrl: `${double.url}/2.0`,
        repository: REPO,
        token: TOKEN,
        sleep: async () => undefined,
        ...overrides,
      }),
  };
}

runForgeContract('Bitbucket Cloud', async () => {
  const { double, api, forge } = await startCloudDouble();
  return {
    forge,
    token: TOKEN,
    baseBranch: 'main',
    missingRepository: 'acme/missing',
    labels: false,
    ...repositoryProbes(double, REPO),
    addExternalCheck: async (sha, name, state) =>
      api.addStatus(
        REPO,
        sha,
        name,
        { pending: 'INPROGRESS', success: 'SUCCESSFUL', failure: 'FAILED' }[state],
      ),
    postedStatuses: async (sha) =>
      api.postedStatuses(REPO, sha).map((s) => ({
        context: s.context,
        state: { INPROGRESS: 'pending', SUCCESSFUL: 'success', FAILED: 'failure' }[s.state] ?? s.state,
      })),
    ...mountedApiControls(double, api),
  };
});

describe('BitbucketCloudForge: Bitbucket Cloud specifics', () => {
  const bb = sharedMountedDouble(startCloudDouble, (started) => ({
    double: started.double,
    api: started.api,
  }));
  const branch = branchMaker(() => bb().double, REPO);

  it('reads full hashes although Bitbucket answers 12 characters, and merges into a real merge commit', async () => {
    const head = await branch();
    const forge = bb().forge();
    const opened = await forge.openPullRequest({ head: head.name, base: 'main', title: 'hashes', body: '' });
    expect(opened.headSha).toBe(head.sha);
    const { mergeCommitSha } = await forge.merge(opened.number, head.sha);
    expect(mergeCommitSha).toMatch(/^[0-9a-f]{40}$/);
    expect(await bb().double.branchSha(REPO, 'main')).toBe(mergeCommitSha);
  });

  it('gives every build status a link: the commit page when Rollgate has none', async () => {
    const head = await branch();
    await bb().forge().setCommitStatus({
      sha: head.sha,
      state: 'pending',
      context: 'rollgate/prod',
      description: 'canary running',
    });
    const response = await fetch(`${bb().double.url}/2.0/repositories/${REPO}/commit/${head.sha}/statuses`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const body = (await response.json()) as { values: Array<{ key: string; url: string }> };
    expect(body.values).toEqual([
      expect.objectContaining({
        key: 'rollgate/prod',
        url: `${bb().double.url}/${REPO}/commits/${head.sha}`,
      }),
    ]);
  });

  it('refuses a reviewer Bitbucket does not know before creating anything', async () => {
    const head = await branch();
    const forge = bb().forge();
    const error = (await forge
      .openPullRequest({ head: head.name, base: 'main', title: 'x', body: '', reviewers: ['nobody-here'] })
      .catch((e: unknown) => e)) as ForgeError;
    expect(error.code).toBe('forge.not_found');
    expect(await forge.findOpenPullRequest(head.name, 'main')).toBeUndefined();
  });

  it('sends a signed repo:push on merge that Rollgate verifies and reads as a push to the base', async () => {
    const secret = 'bitbucket-hook-secret';
    const receiver = await startHookReceiver();
    try {
      bb().api.sendPushHooks();
      bb().api.onWebhook(receiver.url('/webhooks/bitbucket'), secret);
      const head = await branch();
      const forge = bb().forge();
      const opened = await forge.openPullRequest({ head: head.name, base: 'main', title: 'hook', body: '' });
      await forge.merge(opened.number, head.sha);
      await bb().api.hooks.flush();
      const merged = receiver.received.filter(
        (d) =>
          (JSON.parse(d.body.toString('utf8')) as { push: { changes: Array<{ new?: { name?: string } }> } })
            .push.changes[0]?.new?.name === 'main',
      );
      expect(merged).toHaveLength(1);
      const [delivery] = merged;
      if (!delivery) throw new Error('no delivery');
      expect(delivery.headers['x-event-key']).toBe('repo:push');
      expect(bitbucketProvider.verify(delivery.headers, delivery.body, { bitbucket: { secret } })).toEqual({
        ok: true,
      });
      expect(
        bitbucketProvider.verify(delivery.headers, delivery.body, { bitbucket: { secret: 'x' } }).ok,
      ).toBe(false);
      expect(
        bitbucketProvider.interpret(delivery.headers, JSON.parse(delivery.body.toString('utf8'))),
      ).toMatchObject({
        kind: 'push',
        branches: ['main'],
        repositoryUrls: expect.arrayContaining([`${bb().double.url}/${REPO}`]) as unknown,
      });
    } finally {
      await receiver.close();
    }
  });

  it("records (and answers 400) a request that breaks Bitbucket's published description", async () => {
    const response = await fetch(`${bb().double.url}/2.0/repositories/${REPO}/pullrequests/1/merge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'pullrequest_merge_parameters', merge_strategy: 'octopus', sha: 'abc' }),
    });
    expect(response.status).toBe(400);
    const problems = bb().double.invalidRequests.flatMap((violation) => violation.problems);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('body/merge_strategy: must be equal to one of the allowed values'),
        'body/sha: not a documented property',
      ]),
    );
    bb().double.reset();
  });
});
