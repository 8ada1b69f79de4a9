// GitHubForge against the forge double: the shared contract, plus what only GitHub has (webhooks, Git auth, write spacing, API URL forms).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GitHubForge, githubApiBase, type GitHubForgeOptions } from '../../../src/forge/github-forge.ts';
import { ForgeError } from '../../../src/forge/forge-error.ts';
import { githubProvider } from '../../../src/server/webhook-providers/github.ts';
import { runForgeContract } from '../../support/forge-contract.ts';
import { startHookReceiver } from '../../support/hook-receiver.ts';
import { branchMaker, repositoryProbes } from '../../support/forge-double/repository-probes.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';

const REPO = 'acme/deploy';

function githubForge(double: ForgeDouble, overrides: Partial<GitHubForgeOptions> = {}): GitHubForge {
  return new GitHubForge({
    provider: 'github',
    apiUrl: double.githubApiUrl,
    repository: REPO,
    token: double.token,
    // Spacing is checked on its own below; the contract counts only retry waits.
    writeSpacingMs: 0,
    notificationSpacingMs: 0,
    sleep: async () => undefined,
    ...overrides,
  });
}

async function prepareDouble(): Promise<ForgeDouble> {
  const double = await startForgeDouble();
  await double.createRepository(REPO, { files: { 'env/prod/web.yaml': 'image: web:1\n' } });
  double.addUser('release-manager');
  double.repository(REPO).collaborators.add('release-manager');
  return double;
}

runForgeContract('GitHub (Enterprise Server API form)', async () => {
  const double = await prepareDouble();
  return {
    forge: (overrides) => githubForge(double, overrides),
    token: double.token,
    baseBranch: 'main',
    missingRepository: 'acme/missing',
    ...repositoryProbes(double, REPO),
    addExternalCheck: async (sha, name, state) => {
      double.addCheckRun(
        REPO,
        sha,
        state === 'pending' ? { name, status: 'in_progress' } : { name, conclusion: state },
      );
    },
    postedStatuses: async (sha) =>
      double
        .repository(REPO)
        .statuses.filter((status) => status.sha === sha)
        .map((status) => ({ context: status.context, state: status.state })),
    rateLimitNext: (count, kind) => {
      if (kind === 'primary') double.faults.primaryRateLimit(count, { resetInSeconds: 1 });
      else double.faults.secondaryRateLimit(count, { retryAfterSeconds: 1 });
    },
    serverErrorNext: (count) => {
      double.faults.serverError(count);
    },
    violations: () => double.violations(),
    reset: () => double.reset(),
    close: () => double.stop(),
  };
});

describe('GitHubForge: GitHub specifics', () => {
  let double: ForgeDouble;
  const branch = branchMaker(() => double, REPO);

  beforeAll(async () => {
    double = await prepareDouble();
  });
  afterAll(async () => {
    await double.stop();
  });
  afterEach(() => {
    const violations = double.violations();
    double.reset();
    expect(violations).toEqual([]);
  });

  it('takes both API URL forms: api.github.com (root) and Enterprise Server (/api/v3), trailing slash or not', async () => {
    expect(githubApiBase('https://api.github.com/')).toBe('https://api.github.com');
    expect(githubApiBase('https://ghe.example.com/api/v3/')).toBe('https://ghe.example.com/api/v3');
    expect(() => githubApiBase('ghe.example.com')).toThrow(/not a URL/);
    expect(() => githubApiBase('https://user:pw@ghe.example.com/api/v3')).toThrow(/credentials/);
    const head = await branch();
    const root = githubForge(double, { apiUrl: `${double.url}/` });
    const pull = await root.openPullRequest({ head: head.name, base: 'main', title: 'root form', body: '' });
    expect((await githubForge(double).getPullRequest(pull.number)).title).toBe('root form');
  });

  it('reads approvals from reviews: the latest deciding review of each user counts, a comment decides nothing', async () => {
    const head = await branch();
    const forge = githubForge(double);
    const pull = await forge.openPullRequest({ head: head.name, base: 'main', title: 'reviews', body: '' });
    expect(await forge.approvals(pull.number)).toEqual([]);
    await double.addReview(REPO, pull.number, 'release-manager', 'COMMENTED');
    expect(await forge.approvals(pull.number)).toEqual([]);
    await double.addReview(REPO, pull.number, 'release-manager', 'APPROVED');
    await double.addReview(REPO, pull.number, 'release-manager', 'COMMENTED');
    await double.addReview(REPO, pull.number, 'sre-lead', 'CHANGES_REQUESTED');
    expect(await forge.approvals(pull.number)).toEqual(['release-manager']);
    await double.addReview(REPO, pull.number, 'sre-lead', 'APPROVED');
    await double.addReview(REPO, pull.number, 'release-manager', 'CHANGES_REQUESTED');
    expect(await forge.approvals(pull.number)).toEqual(['sre-lead']);
  });

  it('sends webhooks that pass the schemas, are signed like GitHub, and that Rollgate reads as a merge and a push', async () => {
    const receiver = await startHookReceiver(204);
    const { received } = receiver;
    try {
      const secret = 'hook-secret';
      double.onWebhook(receiver.url('/webhooks/github'), secret);
      const head = await branch();
      const forge = githubForge(double);
      const pull = await forge.openPullRequest({
        head: head.name,
        base: 'main',
        title: 'webhooks',
        body: '',
      });
      await forge.merge(pull.number, head.sha);
      await double.flushWebhooks();

      const events = received.map((delivery) => delivery.headers['x-github-event']);
      expect(events).toEqual(['push', 'push', 'pull_request']);
      for (const delivery of received) {
        expect(
          githubProvider.verify(delivery.headers, delivery.body, { github: { secret } } as never),
        ).toEqual({ ok: true });
        expect(
          githubProvider.verify(delivery.headers, delivery.body, { github: { secret: 'other' } } as never).ok,
        ).toBe(false);
        expect(delivery.headers['x-github-delivery']).toMatch(/^[0-9a-f-]{36}$/);
      }
      const [branchPush, mergePush, closed] = received.map((delivery) =>
        githubProvider.interpret(delivery.headers, JSON.parse(delivery.body.toString('utf8'))),
      );
      expect(branchPush).toMatchObject({ kind: 'push', cause: 'push', branches: [head.name] });
      expect(mergePush).toMatchObject({ kind: 'push', cause: 'push', branches: ['main'] });
      expect(closed).toMatchObject({ kind: 'push', cause: 'merge', branches: ['main'] });
      const payload = JSON.parse(received[2]?.body.toString('utf8') ?? '{}') as {
        pull_request: { merged: boolean; merge_commit_sha: string };
      };
      expect(payload.pull_request.merged).toBe(true);
      expect(payload.pull_request.merge_commit_sha).toBe(await double.branchSha(REPO, 'main'));
    } finally {
      await receiver.close();
      double.webhooks.deliveries.length = 0;
    }
  });

  it('requires the token on Git too: no or a wrong token cannot fetch, a read-only token cannot push', async () => {
    const { user } = double.tokens.get(double.token) ?? { user: double.bot };
    double.addToken('ghp_readonly', { user, contents: 'read' });
    await expect(
      double.pushCommit(REPO, 'promote/anonymous', { a: '1' }, { token: 'ghp_wrong' }),
    ).rejects.toThrow(/Authentication failed|401|Invalid/);
    await expect(
      double.pushCommit(REPO, 'promote/readonly', { a: '1' }, { token: 'ghp_readonly' }),
    ).rejects.toThrow(/403|denied/);
    expect(await double.branchSha(REPO, 'promote/readonly')).toBeUndefined();
    const pushed = await double.pushCommit(REPO, 'promote/writer', { a: '1' });
    expect(await double.branchSha(REPO, 'promote/writer')).toBe(pushed);
  });

  it('maps a 403 without rate-limit signals (a missing permission) to forge.unauthorized, not rate_limited', async () => {
    double.addToken('ghp_no_statuses', { user: double.bot, statuses: 'read' });
    const head = await branch();
    const error = await githubForge(double, { token: 'ghp_no_statuses' })
      .setCommitStatus({ sha: head.sha, state: 'success', context: 'rollgate/staging', description: 'ok' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ForgeError);
    expect((error as ForgeError).code).toBe('forge.unauthorized');
    expect((error as ForgeError).context.status).toBe(403);
  });

  it('reports a merge GitHub refuses (conflicting change on the base) as forge.conflict', async () => {
    const head = await double.commit(REPO, 'promote/conflicting', {
      'env/prod/web.yaml': 'image: web:2\n',
    });
    await double.commit(REPO, 'main', { 'env/prod/web.yaml': 'image: web:3\n' });
    const forge = githubForge(double);
    const pull = await forge.openPullRequest({
      head: 'promote/conflicting',
      base: 'main',
      title: 'conflict',
      body: '',
    });
    const error = await forge.merge(pull.number, head).catch((caught: unknown) => caught);
    expect((error as ForgeError).code).toBe('forge.conflict');
    expect((error as ForgeError).message).toMatch(/not mergeable/);
  });

  it('spaces writes of one token at least writeSpacingMs apart (GitHub asks one second), through the injected sleep', async () => {
    const waits: number[] = [];
    const forge = githubForge(double, {
      writeSpacingMs: 1_000,
      notificationSpacingMs: 3_000,
      token: double.token,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const head = await branch();
    await forge.setCommitStatus({ sha: head.sha, state: 'pending', context: 'a', description: 'one' });
    await forge.setCommitStatus({ sha: head.sha, state: 'pending', context: 'b', description: 'two' });
    await forge.checksState(head.sha);
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(waits.every((ms) => ms > 0 && ms <= 1_000)).toBe(true);
  });

  it('gives up on an attempt that hangs after requestTimeoutMs and retries it like a network error', async () => {
    const head = await branch();
    const pull = await githubForge(double).openPullRequest({
      head: head.name,
      base: 'main',
      title: 'hang',
      body: '',
    });
    double.faults.stall(1);
    // A stalled request is never answered, so the timeout only bounds the wait; 200 ms also cut off the
    // answered retry once when the machine ran at load 13 (CI), 1 s leaves it room.
    const patient = githubForge(double, { requestTimeoutMs: 1_000, maxRetries: 1 });
    expect((await patient.getPullRequest(pull.number)).number).toBe(pull.number);
    double.faults.stall(2);
    const error = await patient.getPullRequest(pull.number).catch((caught: unknown) => caught);
    expect((error as ForgeError).code).toBe('forge.unavailable');
    expect((error as ForgeError).message).toMatch(/network/);
  });

  it('does not merge a draft: GitHub answers 405, the forge says forge.conflict', async () => {
    const head = await branch();
    const forge = githubForge(double);
    const pull = await forge.openPullRequest({
      head: head.name,
      base: 'main',
      title: 'draft',
      body: '',
      draft: true,
    });
    expect(pull.draft).toBe(true);
    const error = await forge.merge(pull.number, head.sha).catch((caught: unknown) => caught);
    expect((error as ForgeError).code).toBe('forge.conflict');
    expect((error as ForgeError).context.status).toBe(405);
  });

  it('records (and answers 422) a request that breaks GitHub’s description', async () => {
    const response = await fetch(`${double.githubApiUrl}/repos/${REPO}/pulls?stat=open`, {
      method: 'POST',
      headers: {
        authorization: `token ${double.token}`,
        'content-type': 'application/json',
        'user-agent': 'test',
      },
      body: JSON.stringify({ head: 1, base: 'main', draft: 'yes' }),
    });
    expect(response.status).toBe(422);
    const problems = double.invalidRequests.flatMap((violation) => violation.problems);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('query: must NOT have additional properties (stat)'),
        expect.stringContaining('body/head: must be string'),
        expect.stringContaining('body/draft: must be boolean'),
      ]),
    );
    double.reset();
  });
});
