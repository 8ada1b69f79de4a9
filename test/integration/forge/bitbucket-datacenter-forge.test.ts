// BitbucketDataCenterForge against the forge double's Bitbucket Data Center API: the shared contract, plus what only
// Data Center has (versions that guard edits and merges, merge checks with vetoes, repo:refs_changed webhooks).
import { describe, expect, it } from 'vitest';
import type { ForgeOptions } from '../../../src/forge/forge.ts';
import type { ForgeError } from '../../../src/forge/forge-error.ts';
import { BitbucketDataCenterForge } from '../../../src/forge/bitbucket-datacenter-forge.ts';
import { bitbucketProvider } from '../../../src/server/webhook-providers/bitbucket.ts';
import { runForgeContract } from '../../support/forge-contract.ts';
import { BitbucketDataCenterApi } from '../../support/forge-double/bitbucket-datacenter-api.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { mountedApiControls, sharedMountedDouble } from '../../support/forge-double/mounted-api.ts';
import { branchMaker, repositoryProbes } from '../../support/forge-double/repository-probes.ts';
import { startHookReceiver } from '../../support/hook-receiver.ts';

const REPO = 'acme/deploy';
const TOKEN = 'bitbucket-dc-double-token-0123456789';

interface DataCenterDouble {
  double: ForgeDouble;
  api: BitbucketDataCenterApi;
  forge(overrides?: Partial<ForgeOptions>): BitbucketDataCenterForge;
}

async function startDataCenterDouble(): Promise<DataCenterDouble> {
  const double = await startForgeDouble();
  const api = new BitbucketDataCenterApi(double);
  double.mount('/bitbucket/rest', api.handle);
  double.addToken(TOKEN, { user: double.bot });
  await double.createRepository(REPO, { files: { 'env/prod/web.yaml': 'image: web:1\n' } });
  double.addUser('release-manager');
  return {
    double,
    api,
    forge: (overrides = {}) =>
      new BitbucketDataCenterForge({
        provider: 'bitbucket-datacenter',
        apiUrl: `${double.url}/bitbucket`,
        repository: 'ACME/deploy',
        token: TOKEN,
        sleep: async () => undefined,
        ...overrides,
      }),
  };
}

const STATE_NAMES: Record<string, string> = {
  INPROGRESS: 'pending',
  SUCCESSFUL: 'success',
  FAILED: 'failure',
};

runForgeContract('Bitbucket Data Center', async () => {
  const { double, api, forge } = await startDataCenterDouble();
  return {
    forge,
    token: TOKEN,
    baseBranch: 'main',
    missingRepository: 'ACME/missing',
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
      api
        .postedStatuses(REPO, sha)
        .map((s) => ({ context: s.context, state: STATE_NAMES[s.state] ?? s.state })),
    ...mountedApiControls(double, api),
  };
});

describe('BitbucketDataCenterForge: Bitbucket Data Center specifics', () => {
  const dc = sharedMountedDouble(startDataCenterDouble, (started) => ({
    double: started.double,
    api: started.api,
  }));
  const branch = branchMaker(() => dc().double, REPO);

  it('refuses a merge its merge checks veto, naming the veto, and merges once the required build passed', async () => {
    const head = await branch();
    const forge = dc().forge();
    dc().api.requireSuccessfulBuilds(REPO);
    const opened = await forge.openPullRequest({ head: head.name, base: 'main', title: 'checks', body: '' });
    const baseBefore = await dc().double.branchSha(REPO, 'main');
    const vetoed = (await forge.merge(opened.number, head.sha).catch((e: unknown) => e)) as ForgeError;
    expect(vetoed.code).toBe('forge.conflict');
    expect(vetoed.message).toContain('Not all required builds are successful yet');
    expect(await dc().double.branchSha(REPO, 'main')).toBe(baseBefore);

    dc().api.addStatus(REPO, head.sha, 'ci/build', 'SUCCESSFUL');
    const { mergeCommitSha } = await forge.merge(opened.number, head.sha);
    expect(await dc().double.branchSha(REPO, 'main')).toBe(mergeCommitSha);
  });

  it('edits with the version it read: a push in between (a rescope) raises it and the stale edit is refused', async () => {
    const head = await branch();
    const forge = dc().forge();
    const opened = await forge.openPullRequest({ head: head.name, base: 'main', title: 'v1', body: '' });
    const response = await fetch(
      `${dc().double.url}/bitbucket/rest/api/1.0/projects/ACME/repos/deploy/pull-requests/${opened.number}`,
      { headers: { authorization: `Bearer ${TOKEN}` } },
    );
    const { version } = (await response.json()) as { version: number };
    await dc().double.commit(REPO, head.name, { 'env/prod/later.yaml': 'later: true\n' });
    const stale = await fetch(
      `${dc().double.url}/bitbucket/rest/api/1.0/projects/ACME/repos/deploy/pull-requests/${opened.number}`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ version, title: 'stale' }),
      },
    );
    expect(stale.status).toBe(409);
    expect((await forge.updatePullRequest(opened.number, { title: 'v2', body: 'b' })).title).toBe('v2');
  });

  it('sends a signed repo:refs_changed on merge that Rollgate verifies and reads as a push to the base', async () => {
    const secret = 'bitbucket-dc-hook-secret';
    const receiver = await startHookReceiver();
    try {
      dc().api.sendPushHooks();
      dc().api.onWebhook(receiver.url('/webhooks/bitbucket'), secret);
      const head = await branch();
      const forge = dc().forge();
      const opened = await forge.openPullRequest({ head: head.name, base: 'main', title: 'hook', body: '' });
      await forge.merge(opened.number, head.sha);
      await dc().api.hooks.flush();
      const onMain = receiver.received.filter(
        (d) =>
          (JSON.parse(d.body.toString('utf8')) as { changes: Array<{ refId: string }> }).changes[0]?.refId ===
          'refs/heads/main',
      );
      expect(onMain).toHaveLength(1);
      const [delivery] = onMain;
      if (!delivery) throw new Error('no delivery');
      expect(delivery.headers['x-event-key']).toBe('repo:refs_changed');
      expect(bitbucketProvider.verify(delivery.headers, delivery.body, { bitbucket: { secret } })).toEqual({
        ok: true,
      });
      expect(
        bitbucketProvider.interpret(delivery.headers, JSON.parse(delivery.body.toString('utf8'))),
      ).toMatchObject({
        kind: 'push',
        branches: ['main'],
        repositoryUrls: expect.arrayContaining([`${dc().double.url}/${REPO}.git`]) as unknown,
      });
    } finally {
      await receiver.close();
    }
  });

  it('records (and answers 400) a request that breaks the documented request shapes', async () => {
    const response = await fetch(
      `${dc().double.url}/bitbucket/rest/api/1.0/projects/ACME/repos/deploy/commits/abc/builds`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ key: 'k', state: 'PASSED', context: 'x' }),
      },
    );
    expect(response.status).toBe(400);
    const problems = dc().double.invalidRequests.flatMap((violation) => violation.problems);
    expect(problems).toEqual(
      expect.arrayContaining([
        "body: must have required property 'url'",
        expect.stringContaining('body/state: must be equal to one of the allowed values'),
        'body/context: not a documented property',
      ]),
    );
    dc().double.reset();
  });
});
