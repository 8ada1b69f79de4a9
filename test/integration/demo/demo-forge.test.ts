// The demo forge through Rollgate's own Gitea forge client: pull requests, statuses and real merges in a bare repository.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDemoForge, type DemoForge } from '../../../src/demo/demo-forge.ts';
import { ForgeError } from '../../../src/forge/forge-error.ts';
import { GiteaForge } from '../../../src/forge/gitea-forge.ts';
import {
  createBareRepository,
  git,
  makeTempDir,
  WorkingCopy,
  type TempDir,
} from '../../support/git-fixtures.ts';

const REPOSITORY = 'rollgate/demo';
const BRANCH = 'rollgate/promote/staging-to-prod/demo';

function rollout(tag: string): string {
  return `kind: Rollout\nmetadata:\n  name: demo\nspec:\n  image: ghcr.io/rollgate/demo-app:${tag}\n`;
}

let tmp: TempDir;
let bare: string;
let work: WorkingCopy;
let forge: DemoForge;

function giteaForge(token = forge.token): GiteaForge {
  return new GiteaForge({
    provider: 'gitea',
    apiUrl: forge.url,
    repository: REPOSITORY,
    token,
    maxRetries: 0,
  });
}

/** Commits `prod/rollout.yaml` at `tag` on the promotion branch and pushes it; returns the commit. */
async function pushPromotion(tag: string): Promise<string> {
  work.write({ 'prod/rollout.yaml': rollout(tag) });
  const sha = work.commit(`promote ${tag}`);
  await work.push(bare, { force: true });
  return sha;
}

beforeEach(async () => {
  tmp = makeTempDir('rollgate-demo-forge-');
  bare = createBareRepository(tmp.path, 'demo');
  const main = new WorkingCopy(`${tmp.path}/main`);
  main.write({ 'prod/rollout.yaml': rollout('1.0.0'), 'README.md': 'demo\n' }).commit('first');
  await main.push(bare);
  work = new WorkingCopy(`${tmp.path}/work`, BRANCH);
  git(work.dir, ['fetch', '--quiet', bare, 'main']);
  git(work.dir, ['reset', '--quiet', '--hard', 'FETCH_HEAD']);
  forge = await startDemoForge({ bareDir: bare, repository: REPOSITORY });
});

afterEach(async () => {
  await forge.stop();
  tmp.remove();
});

describe('demo forge', () => {
  it('opens, finds, edits, comments and merges a pull request as a real merge commit in the bare repository', async () => {
    const client = giteaForge();
    const mainBefore = git(bare, ['rev-parse', 'refs/heads/main']);
    const head = await pushPromotion('1.1.0');

    const opened = await client.openPullRequest({
      head: BRANCH,
      base: 'main',
      title: 'Promote demo to 1.1.0',
      body: 'x',
    });
    expect(opened).toMatchObject({ number: 1, state: 'open', headSha: head, base: 'main', draft: false });
    expect(opened.url).toBe(`${forge.url}/rollgate/demo/pulls/1`);
    // A second pull request joining the same branches is refused; the promoter then adopts the open one.
    await expect(
      client.openPullRequest({ head: BRANCH, base: 'main', title: 'again', body: '' }),
    ).rejects.toMatchObject({ code: 'forge.conflict' });
    expect(await client.findOpenPullRequest(BRANCH, 'main')).toMatchObject({ number: 1 });

    const newer = await pushPromotion('1.3.0');
    await client.updatePullRequest(1, { title: 'Promote demo to 1.3.0', body: 'y' });
    await client.comment(1, 'Superseded');
    expect(await client.findOpenPullRequest(BRANCH, 'main')).toMatchObject({
      headSha: newer,
      title: 'Promote demo to 1.3.0',
    });
    expect(await forge.diff(1)).toMatch(/^-.*demo-app:1\.0\.0\n\+.*demo-app:1\.3\.0$/m);

    await client.setCommitStatus({
      sha: newer,
      state: 'pending',
      context: 'rollgate/staging',
      description: 'canary',
    });
    expect(await client.checksState(newer)).toBe('pending');
    await client.setCommitStatus({
      sha: newer,
      state: 'success',
      context: 'rollgate/staging',
      description: 'done',
    });
    expect(await client.checksState(newer)).toBe('success');

    const { mergeCommitSha } = await client.merge(1, newer);
    expect(git(bare, ['rev-parse', 'refs/heads/main'])).toBe(mergeCommitSha);
    expect(git(bare, ['rev-list', '--parents', '-n', '1', mergeCommitSha]).split(' ').slice(1)).toEqual([
      mainBefore,
      newer,
    ]);
    expect(git(bare, ['show', `${mergeCommitSha}:prod/rollout.yaml`])).toContain('demo-app:1.3.0');
    expect(git(bare, ['show', `${mergeCommitSha}:README.md`])).toBe('demo');
    expect(await client.getPullRequest(1)).toMatchObject({ state: 'merged', mergeCommitSha });
    expect(forge.pulls()).toMatchObject([
      {
        number: 1,
        titles: ['Promote demo to 1.1.0', 'Promote demo to 1.3.0'],
        comments: ['Superseded'],
        merged: true,
      },
    ]);
    // Merging twice is refused (405), never a second merge commit.
    await expect(client.merge(1, newer)).rejects.toMatchObject({ code: 'forge.conflict' });
    expect(git(bare, ['rev-parse', 'refs/heads/main'])).toBe(mergeCommitSha);
  });

  it('refuses a merge whose head moved since it was verified (409) and leaves main where it was', async () => {
    const client = giteaForge();
    const verified = await pushPromotion('1.1.0');
    await client.openPullRequest({ head: BRANCH, base: 'main', title: 'Promote demo to 1.1.0', body: '' });
    await pushPromotion('1.2.0');
    const mainBefore = git(bare, ['rev-parse', 'refs/heads/main']);

    const response = await fetch(`${forge.apiUrl}/repos/${REPOSITORY}/pulls/1/merge`, {
      method: 'POST',
      headers: { authorization: `token ${forge.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ Do: 'merge', head_commit_id: verified }),
    });
    expect(response.status).toBe(409);
    await expect(client.merge(1, verified)).rejects.toMatchObject({ code: 'forge.conflict' });
    expect(git(bare, ['rev-parse', 'refs/heads/main'])).toBe(mainBefore);
    expect(await client.getPullRequest(1)).toMatchObject({ state: 'open' });
  });

  it('answers 401 without the token or with another one, and never echoes it', async () => {
    for (const authorization of [undefined, 'token not-the-token', `bearer ${forge.token}`]) {
      const response = await fetch(`${forge.apiUrl}/repos/${REPOSITORY}/pulls?state=open`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(response.status, authorization).toBe(401);
      expect(await response.text()).not.toContain(forge.token);
    }
    const refused = await giteaForge('not-the-token')
      .findOpenPullRequest(BRANCH, 'main')
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ForgeError);
    expect(refused).toMatchObject({ code: 'forge.unauthorized' });
    expect(String(refused)).not.toContain('not-the-token');
  });

  it('pages the open pull requests 50 at a time and answers 404 for another repository', async () => {
    const client = giteaForge();
    const topics = Array.from({ length: 52 }, (_, i) => `topic-${i}`);
    // One push for every branch: 52 pushes (a process each) took most of the test on a loaded machine.
    git(work.dir, ['push', '--quiet', bare, ...topics.map((topic) => `HEAD:refs/heads/${topic}`)]);
    for (const [i, topic] of topics.entries()) {
      await client.openPullRequest({ head: topic, base: 'main', title: `topic ${i}`, body: '' });
    }
    // The oldest is on the second page: found only when the client reads every page.
    expect(await client.findOpenPullRequest('topic-0', 'main')).toMatchObject({ number: 1 });
    const other = new GiteaForge({
      provider: 'gitea',
      apiUrl: forge.apiUrl,
      repository: 'someone/else',
      token: forge.token,
      maxRetries: 0,
    });
    await expect(other.getPullRequest(1)).rejects.toMatchObject({ code: 'forge.not_found' });
  });
});
