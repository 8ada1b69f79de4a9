// An aborted revision written back through the GitHub double over a real bare repository: one revert pull request, found again after a restart.
import * as fs from 'node:fs';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubForge } from '../../../src/forge/github-forge.ts';
import { readCommitChanges } from '../../../src/git/commit-changes.ts';
import { pushPromotionCommit } from '../../../src/git/promotion-branch.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { RestoredObject } from '../../../src/revert/revert-action.ts';
import { runRevert, type RevertDeps } from '../../../src/reverter/run-revert.ts';
import { makeTempDir, type TempDir } from '../../support/git-fixtures.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';

const REPO = 'acme/deploy';
const rollout = (image: string) =>
  `apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: { name: web }\nspec:\n  template:\n    spec:\n      containers:\n        - { name: app, image: ${image} }\n`;
const config = (level: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: web-config }\ndata: { LOG_LEVEL: ${level} }\n`;
const FILES = ['envs/staging/web.yaml', 'envs/staging/config.yaml'];

describe('abort written back (GitHub double, real repository)', () => {
  let double: ForgeDouble;
  let cache: TempDir;
  let bad: string;
  const restored: RestoredObject[] = [];
  const recorded: Array<{ url: string; revision: string }> = [];

  /** A fresh process's ports: nothing remembered but what the forge and Git hold. */
  const deps = (): RevertDeps => ({
    forge: new GitHubForge({
      provider: 'github',
      apiUrl: double.githubApiUrl,
      repository: REPO,
      token: double.token,
      writeSpacingMs: 0,
      notificationSpacingMs: 0,
      sleep: async () => undefined,
    }),
    baseBranch: 'main',
    readCommit: (sha) => readCommitChanges(double.repository(REPO).path, sha),
    readTip: async () => {
      const sha = (await double.branchSha(REPO, 'main')) ?? '';
      const gitdir = double.repository(REPO).path;
      const files = await Promise.all(
        FILES.map(async (path) => {
          const { blob } = await git.readBlob({ fs, gitdir, oid: sha, filepath: path });
          return { path, text: new TextDecoder().decode(blob) };
        }),
      );
      return { sha, files };
    },
    push: async ({ branch, files, message }) => {
      await pushPromotionCommit({
        source: 'staging',
        url: double.gitUrl(REPO),
        baseBranch: 'main',
        branch,
        files: files.flatMap((file) => (file.text === null ? [] : [{ path: file.path, text: file.text }])),
        deletions: files.flatMap((file) => (file.text === null ? [file.path] : [])),
        message,
        author: { name: 'Rollgate', email: 'rollgate@users.noreply.invalid' },
        cacheDir: cache.path,
      });
    },
    restore: async (object) => {
      restored.push(object);
    },
    record: async (pullRequest, revision) => {
      recorded.push({ url: pullRequest.url, revision });
    },
    logger: silentLogger,
  });
  const source = { name: 'staging', path: 'envs/staging', namespace: 'shop' };
  const aborted = (recordedRevision?: string) => ({
    namespace: 'shop',
    name: 'web',
    revision: 'h2',
    aborted: true,
    abortMessage: 'metric "errors" assessed Failed',
    commit: bad,
    ...(recordedRevision !== undefined ? { recordedRevision } : {}),
  });

  beforeAll(async () => {
    cache = makeTempDir('rollgate-revert-cache-');
    double = await startForgeDouble();
    await double.createRepository(REPO, {
      files: {
        [FILES[0] as string]: rollout('registry.example/web:1.0.0'),
        [FILES[1] as string]: config('info'),
      },
    });
    bad = await double.commit(
      REPO,
      'main',
      { [FILES[0] as string]: rollout('registry.example/web:2.0.0'), [FILES[1] as string]: config('debug') },
      { message: 'web 2.0.0 with debug logs' },
    );
  });
  afterAll(async () => {
    await double.stop();
    cache.remove();
  });

  it('opens one true revert, restores the ConfigMap, and after a restart finds it instead of opening another', async () => {
    const first = await runRevert(source, aborted(), deps());
    expect(first.state).toBe('opening');
    expect(first.mode).toBe('revert');
    expect(restored.map((o) => `${o.kind}/${o.namespace}/${o.name}`)).toEqual(['ConfigMap/shop/web-config']);
    expect(restored[0]?.manifest).toMatchObject({ data: { LOG_LEVEL: 'info' } });
    const pulls = [...double.repository(REPO).pulls.values()];
    expect(pulls.map((p) => [p.head, p.state])).toEqual([['rollgate/revert/staging/shop/web/h2', 'open']]);
    expect(recorded).toEqual([{ url: first.pullRequest?.url, revision: 'h2' }]);
    expect(`${await double.gitIn(REPO, ['show', `rollgate/revert/staging/shop/web/h2:${FILES[1]}`])}\n`).toBe(
      config('info'),
    );

    // A restart: new ports, the record on the Rollout not written yet (crash between) → found, recorded, not opened.
    const again = await runRevert(source, aborted(), deps());
    expect(again.state).toBe('open');
    expect(double.repository(REPO).pulls.size).toBe(1);
    expect(recorded).toHaveLength(2);

    // Closed unmerged: the Rollout's record keeps it from being opened a second time.
    const forge = deps().forge;
    await forge.closePullRequest(first.pullRequest?.number ?? 0);
    const closed = await runRevert(source, aborted('h2'), deps());
    expect(closed.state).toBe('closed');
    expect(double.repository(REPO).pulls.size).toBe(1);
    expect(double.violations()).toEqual([]);
  });

  it('merged: Git declares the parent again, and a look finds nothing to propose', async () => {
    const pullRequest = await deps().forge.openPullRequest({
      head: 'rollgate/revert/staging/shop/web/h2',
      base: 'main',
      title: 'Revert web revision h2 (aborted in staging)',
      body: '',
    });
    await deps().forge.merge(pullRequest.number, pullRequest.headSha);
    for (const [path, text] of [
      [FILES[0], rollout('registry.example/web:1.0.0')],
      [FILES[1], config('info')],
    ] as const)
      expect(`${await double.gitIn(REPO, ['show', `main:${path}`])}\n`).toBe(text);
    // Should the Rollout still read aborted at the bad commit for a moment, nothing is proposed again.
    const look = await runRevert(source, aborted(), deps());
    expect(look.state).toBe('in-git');
    expect(double.violations()).toEqual([]);
  });
});
