// The forge contract suite: what every Forge implementation must do, run against each forge's test double.
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Forge, ForgeOptions } from '../../src/forge/forge.ts';
import { ForgeError, type ForgeErrorCode } from '../../src/forge/forge-error.ts';

/** What the suite needs from a forge and its double; each forge's test file builds one. */
export interface ForgeContractHarness {
  /**
   * A new client for the prepared repository, sharing nothing in memory with earlier ones (a restart).
   * `overrides` come last, so tests can change the token, repository, sleep or retry limits.
   */
  forge(overrides?: Partial<ForgeOptions>): Forge;
  /** The token the clients use by default (the suite checks it never shows in an error). */
  token: string;
  /** The branch pull requests target. */
  baseBranch: string;
  /** A repository path the forge does not have. */
  missingRepository: string;
  /** False for a forge without pull request labels (Bitbucket): a pull request then reads back none. */
  labels?: boolean;
  /** How this forge names the reviewer `release-manager` (Azure DevOps: an identity id). */
  reviewer?: string;
  /** Commits `files` on `branch` (from the base branch when new) and pushes it with real Git; returns the commit. */
  pushCommit(branch: string, files: Record<string, string>): Promise<string>;
  branchSha(branch: string): Promise<string | undefined>;
  /** Parent commits of `sha`, first parent first. */
  parents(sha: string): Promise<string[]>;
  /** A check reported on `sha` by something other than Rollgate (GitHub: a check run; GitLab: a pipeline). */
  addExternalCheck(sha: string, name: string, state: 'pending' | 'success' | 'failure'): Promise<void>;
  /** Every commit status posted on `sha`, oldest first, as the forge keeps them (not only the latest). */
  postedStatuses(sha: string): Promise<Array<{ context: string; state: string }>>;
  /** Comment bodies of pull request `number`, oldest first, as the forge keeps them. */
  comments(number: number): Promise<string[]>;
  /** The next `count` API requests are rate limited (`primary`: quota used up; `secondary`: slow down). */
  rateLimitNext(count: number, kind: 'primary' | 'secondary'): void;
  /** The next `count` API requests fail with a 5xx. */
  serverErrorNext(count: number): void;
  /** Requests, answers or webhooks so far that broke the forge's published API description. */
  violations(): string[];
  /** Forgets violations and queued faults (called after each test). */
  reset(): void;
  close(): Promise<void>;
}

async function forgeErrorOf(promise: Promise<unknown>): Promise<ForgeError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ForgeError);
    return error as ForgeError;
  }
  throw new Error('expected a ForgeError, the call succeeded');
}

async function expectCode(promise: Promise<unknown>, code: ForgeErrorCode): Promise<ForgeError> {
  const error = await forgeErrorOf(promise);
  expect(error.code, error.message).toBe(code);
  return error;
}

/**
 * Runs the shared suite against one forge. Every test also asserts that nothing the client sent (and
 * nothing the double answered) broke the forge's API description.
 */
export function runForgeContract(name: string, factory: () => Promise<ForgeContractHarness>): void {
  describe(`Forge contract: ${name}`, () => {
    let harness: ForgeContractHarness;
    let sleeps: number[] = [];
    let branchCount = 0;
    const sleep = async (ms: number): Promise<void> => {
      sleeps.push(ms);
    };
    const client = (overrides: Partial<ForgeOptions> = {}): Forge =>
      harness.forge({ sleep, maxRetries: 3, maxRetryWaitMs: 5_000, ...overrides });
    /** A new branch one commit ahead of the base. */
    const branch = async (label: string): Promise<{ name: string; sha: string }> => {
      branchCount += 1;
      const name = `rollgate/${label}-${branchCount}`;
      const sha = await harness.pushCommit(name, {
        [`env/${label}-${branchCount}.yaml`]: `revision: ${branchCount}\n`,
      });
      return { name, sha };
    };
    const open = async (label: string, extra: { labels?: string[]; reviewers?: string[] } = {}) => {
      const head = await branch(label);
      const pull = await client().openPullRequest({
        head: head.name,
        base: harness.baseBranch,
        title: `Promote ${label}`,
        body: `Promotes ${head.sha}`,
        ...extra,
      });
      return { head, pull };
    };

    beforeAll(async () => {
      harness = await factory();
    });
    afterAll(async () => {
      await harness?.close();
    });
    afterEach(() => {
      const violations = harness.violations();
      harness.reset();
      sleeps = [];
      expect(violations).toEqual([]);
    });

    it('opens a pull request with labels and reviewers and reads it back', async () => {
      const withLabels = harness.labels ?? true;
      const { head, pull } = await open('open', {
        ...(withLabels ? { labels: ['promotion', 'rollgate'] } : {}),
        reviewers: [harness.reviewer ?? 'release-manager'],
      });
      expect(pull).toMatchObject({
        title: 'Promote open',
        body: `Promotes ${head.sha}`,
        state: 'open',
        head: head.name,
        headSha: head.sha,
        base: harness.baseBranch,
        draft: false,
      });
      const labels = withLabels ? ['promotion', 'rollgate'] : [];
      expect(pull.labels.sort()).toEqual(labels);
      expect(pull.mergeCommitSha).toBeUndefined();
      expect(pull.url).toMatch(/^https?:\/\//);
      const read = await client().getPullRequest(pull.number);
      expect(read).toEqual({ ...pull, labels: expect.arrayContaining(labels) as unknown });
    });

    it('finds the open pull request from a new client (after a restart), and only that one', async () => {
      const { head, pull } = await open('find');
      const restarted = client();
      expect((await restarted.findOpenPullRequest(head.name, harness.baseBranch))?.number).toBe(pull.number);
      expect(await restarted.findOpenPullRequest(head.name, 'no-such-base')).toBeUndefined();
      expect(
        await restarted.findOpenPullRequest('rollgate/never-pushed', harness.baseBranch),
      ).toBeUndefined();
    });

    it('adopts the pull request another client already opened: opening again is a conflict, finding returns it', async () => {
      const { head, pull } = await open('adopt');
      const other = client();
      const error = await expectCode(
        other.openPullRequest({ head: head.name, base: harness.baseBranch, title: 'again', body: '' }),
        'forge.conflict',
      );
      expect(error.transient).toBe(false);
      expect((await other.findOpenPullRequest(head.name, harness.baseBranch))?.number).toBe(pull.number);
    });

    it('updates title and body after the head branch moved (a superseding revision)', async () => {
      const { head, pull } = await open('update');
      const newer = await harness.pushCommit(head.name, { 'env/update-newer.yaml': 'revision: newer\n' });
      const updated = await client().updatePullRequest(pull.number, {
        title: 'Promote newer',
        body: `Promotes ${newer}`,
      });
      expect(updated).toMatchObject({
        number: pull.number,
        title: 'Promote newer',
        body: `Promotes ${newer}`,
        headSha: newer,
        state: 'open',
      });
    });

    it('comments on a pull request', async () => {
      const { pull } = await open('comment');
      await client().comment(pull.number, 'Canary in staging finished healthy.');
      await client().comment(pull.number, 'Second note.');
      expect(await harness.comments(pull.number)).toEqual([
        'Canary in staging finished healthy.',
        'Second note.',
      ]);
    });

    it('closes with a comment left first; a closed pull request is no longer found open', async () => {
      const { head, pull } = await open('close');
      await client().closePullRequest(pull.number, 'Superseded by a newer revision.');
      expect(await harness.comments(pull.number)).toEqual(['Superseded by a newer revision.']);
      expect((await client().getPullRequest(pull.number)).state).toBe('closed');
      expect(await client().findOpenPullRequest(head.name, harness.baseBranch)).toBeUndefined();
      await client().closePullRequest(pull.number);
      expect(await harness.comments(pull.number)).toHaveLength(1);
    });

    it('combines commit statuses and external checks: failure over pending over success; none at all is success', async () => {
      const { sha } = await branch('checks');
      const forge = client();
      expect(await forge.checksState(sha)).toBe('success');
      await forge.setCommitStatus({
        sha,
        state: 'pending',
        context: 'rollgate/staging',
        description: 'canary running',
      });
      expect(await forge.checksState(sha)).toBe('pending');
      await forge.setCommitStatus({
        sha,
        state: 'success',
        context: 'rollgate/staging',
        description: `healthy canary: ${'x'.repeat(300)}`,
        targetUrl: 'https://rollgate.example/rollouts/web',
      });
      expect(await forge.checksState(sha)).toBe('success');
      await harness.addExternalCheck(sha, 'ci/build', 'pending');
      expect(await forge.checksState(sha)).toBe('pending');
      await harness.addExternalCheck(sha, 'ci/build', 'success');
      expect(await forge.checksState(sha)).toBe('success');
      await harness.addExternalCheck(sha, 'ci/lint', 'failure');
      expect(await forge.checksState(sha)).toBe('failure');

      const other = await branch('checks-error');
      await forge.setCommitStatus({
        ...other,
        sha: other.sha,
        state: 'error',
        context: 'rollgate/prod',
        description: 'x',
      });
      expect(await forge.checksState(other.sha)).toBe('failure');
    });

    it('does not post a status that is already the latest for its context', async () => {
      const { sha } = await branch('status-noop');
      const status = {
        sha,
        state: 'pending' as const,
        context: 'rollgate/staging',
        description: 'canary running',
        targetUrl: 'https://rollgate.example/r/1',
      };
      await client().setCommitStatus(status);
      await client().setCommitStatus(status);
      await client().setCommitStatus({ ...status, context: 'rollgate/prod' });
      await client().setCommitStatus({ ...status, state: 'success' });
      await client().setCommitStatus({ ...status, state: 'success' });
      expect(await harness.postedStatuses(sha)).toEqual([
        { context: 'rollgate/staging', state: 'pending' },
        { context: 'rollgate/prod', state: 'pending' },
        { context: 'rollgate/staging', state: 'success' },
      ]);
    });

    it('merges only at the verified head: a moved head is refused, the verified one makes a real merge commit', async () => {
      const { head, pull } = await open('merge');
      const baseBefore = await harness.branchSha(harness.baseBranch);
      const moved = await harness.pushCommit(head.name, { 'env/merge-late.yaml': 'late: true\n' });
      const refused = await expectCode(client().merge(pull.number, head.sha), 'forge.conflict');
      expect(refused.transient).toBe(false);
      expect(await harness.branchSha(harness.baseBranch)).toBe(baseBefore);

      const { mergeCommitSha } = await client().merge(pull.number, moved);
      expect(await harness.branchSha(harness.baseBranch)).toBe(mergeCommitSha);
      expect(await harness.parents(mergeCommitSha)).toEqual([baseBefore, moved]);
      const merged = await client().getPullRequest(pull.number);
      expect(merged).toMatchObject({ state: 'merged', mergeCommitSha, headSha: moved });
      expect(await client().findOpenPullRequest(head.name, harness.baseBranch)).toBeUndefined();
      await expectCode(client().merge(pull.number, moved), 'forge.conflict');
    });

    it('reports a token the forge does not accept as forge.unauthorized, without the token in the error', async () => {
      const badToken = `${harness.token}-revoked`;
      const error = await expectCode(client({ token: badToken }).getPullRequest(1), 'forge.unauthorized');
      expect(error.transient).toBe(false);
      const shown = `${inspect(error, { depth: 10 })} ${JSON.stringify(error)} ${String(error.stack)}`;
      expect(shown).not.toContain(badToken);
      expect(shown).not.toContain(harness.token);
    });

    it('keeps the token out of every error it throws', async () => {
      const error = await expectCode(client().getPullRequest(999_999), 'forge.not_found');
      const shown = `${inspect(error, { depth: 10, showHidden: true })} ${JSON.stringify(error)}`;
      expect(shown).not.toContain(harness.token);
    });

    it('reports a repository the forge does not have as forge.not_found', async () => {
      const forge = client({ repository: harness.missingRepository });
      await expectCode(forge.findOpenPullRequest('rollgate/x', harness.baseBranch), 'forge.not_found');
    });

    it('waits out primary and secondary rate limits, then succeeds', async () => {
      const { head, pull } = await open('rate');
      sleeps = [];
      harness.rateLimitNext(2, 'primary');
      expect((await client().findOpenPullRequest(head.name, harness.baseBranch))?.number).toBe(pull.number);
      expect(sleeps.length).toBeGreaterThanOrEqual(2);
      expect(sleeps.every((ms) => ms > 0 && ms <= 5_000)).toBe(true);

      sleeps = [];
      harness.rateLimitNext(2, 'secondary');
      expect((await client().getPullRequest(pull.number)).number).toBe(pull.number);
      expect(sleeps.length).toBeGreaterThanOrEqual(2);
      expect(sleeps.every((ms) => ms > 0 && ms <= 5_000)).toBe(true);
    });

    it('gives up on a rate limit after maxRetries with forge.rate_limited (transient)', async () => {
      harness.rateLimitNext(3, 'secondary');
      const error = await expectCode(client({ maxRetries: 2 }).getPullRequest(1), 'forge.rate_limited');
      expect(error.transient).toBe(true);
    });

    it('does not wait longer than maxRetryWaitMs: a longer rate limit is reported at once', async () => {
      harness.rateLimitNext(1, 'secondary');
      sleeps = [];
      await expectCode(client({ maxRetryWaitMs: 10 }).getPullRequest(1), 'forge.rate_limited');
      expect(sleeps).toEqual([]);
    });

    it('retries 5xx with capped backoff, then reports forge.unavailable when they persist', async () => {
      const { pull } = await open('server-error');
      sleeps = [];
      harness.serverErrorNext(2);
      expect((await client().getPullRequest(pull.number)).number).toBe(pull.number);
      expect(sleeps).toHaveLength(2);
      expect(sleeps.every((ms) => ms > 0 && ms <= 5_000)).toBe(true);

      harness.serverErrorNext(10);
      const error = await expectCode(
        client({ maxRetries: 2 }).getPullRequest(pull.number),
        'forge.unavailable',
      );
      expect(error.transient).toBe(true);
      harness.reset();
    });
  });
}
