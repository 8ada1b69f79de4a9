// Promotion branches pushed to real bare repositories over git http-backend, checked with the real git CLI.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { pushPromotionCommit } from '../../../src/git/promotion-branch.ts';
import type { PromotionCommitRequest } from '../../../src/git/promotion-branch.ts';
import { serveGitRepositories } from '../../../src/git/smart-http-server.ts';
import type { GitServer } from '../../../src/git/smart-http-server.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';
import { createBareRepository, git, gitEnv, makeTempDir, WorkingCopy } from '../../support/git-fixtures.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const USER = 'rollgate';
const PASSWORD = 'pr0m0te-s3cret';
const BRANCH = 'rollgate/promote/prod/web';

const ROLLOUT = 'apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: web\n';
const PROMOTED = `${ROLLOUT}# promoted\r\n`;

/** A file's bytes on a ref, exactly (the fixtures' git() trims output). */
function blob(bare: string, spec: string): string {
  return execFileSync('git', ['cat-file', 'blob', spec], { cwd: bare, env: gitEnv, encoding: 'utf8' });
}

interface Served {
  tmp: string;
  bare: string;
  wc: WorkingCopy;
  server: GitServer;
  base: string;
  url: string;
  /** Requests to git-receive-pack (pushes) since the server started. */
  pushes: () => number;
  request: (overrides?: Partial<PromotionCommitRequest>) => PromotionCommitRequest;
}

async function served(): Promise<Served> {
  const tmp = makeTempDir('rollgate-promotion-');
  cleanups.push(() => tmp.remove());
  const root = join(tmp.path, 'repos');
  const bare = createBareRepository(root, 'apps');
  const wc = new WorkingCopy(join(tmp.path, 'work'));
  wc.write({
    'envs/prod/rollout.yaml': ROLLOUT,
    'envs/prod/kustomization.yaml': 'resources:\n- rollout.yaml\n',
    'envs/staging/rollout.yaml': ROLLOUT,
    'scripts/check.sh': '#!/bin/sh\nexit 0\n',
    'README.md': '# apps\n',
  });
  chmodSync(join(wc.dir, 'scripts/check.sh'), 0o755);
  const base = wc.commit('initial');
  await wc.push(bare);
  let pushes = 0;
  const server = await serveGitRepositories({
    root,
    receivePack: true,
    basicAuth: { username: USER, password: PASSWORD },
    onRequest: ({ path }) => {
      if (path.endsWith('/git-receive-pack')) pushes += 1;
    },
  });
  cleanups.push(() => server.stop());
  const url = `${server.url}/apps.git`;
  const cacheDir = join(tmp.path, 'cache');
  const clock = new ManualClock(new Date('2026-06-01T12:00:00Z'));
  return {
    tmp: tmp.path,
    bare,
    wc,
    server,
    base,
    url,
    pushes: () => pushes,
    request: (overrides = {}) => ({
      source: 'prod',
      url,
      auth: { username: USER, password: PASSWORD },
      baseBranch: 'main',
      branch: BRANCH,
      files: [
        { path: 'envs/prod/rollout.yaml', text: PROMOTED },
        { path: 'envs/prod/images/new.yaml', text: 'kind: ConfigMap\n' },
      ],
      message: 'promote web to prod',
      author: { name: 'Release Bot', email: 'release@acme.invalid' },
      cacheDir,
      clock,
      ...overrides,
    }),
  };
}

describe('pushPromotionCommit', () => {
  it('pushes one commit on the base tip with exactly the changed files', async () => {
    const s = await served();
    const result = await pushPromotionCommit(s.request());
    expect(result).toMatchObject({ baseCommit: s.base, pushed: true, outcome: 'created' });
    expect(git(s.bare, ['rev-parse', `refs/heads/${BRANCH}`])).toBe(result.commit);
    expect(git(s.bare, ['rev-parse', `${result.commit}^{tree}`])).toBe(result.tree);
    expect(git(s.bare, ['rev-list', '--parents', '-n', '1', result.commit])).toBe(
      `${result.commit} ${s.base}`,
    );
    expect(git(s.bare, ['diff', '--name-status', `${s.base}..${BRANCH}`])).toBe(
      'A\tenvs/prod/images/new.yaml\nM\tenvs/prod/rollout.yaml',
    );
    expect(git(s.bare, ['diff', '--stat', `${s.base}..${BRANCH}`])).toMatch(/2 files changed, 2 insertions/);
    expect(blob(s.bare, `${BRANCH}:envs/prod/rollout.yaml`)).toBe(PROMOTED);
    // Untouched files, modes included, are the base's.
    expect(git(s.bare, ['ls-tree', BRANCH, 'scripts/check.sh'])).toBe(
      git(s.bare, ['ls-tree', s.base, 'scripts/check.sh']),
    );
    expect(git(s.bare, ['log', '-1', '--format=%an <%ae>|%cn|%ct|%s', BRANCH])).toBe(
      `Release Bot <release@acme.invalid>|Rollgate|${Date.parse('2026-06-01T12:00:00Z') / 1000}|promote web to prod`,
    );
    git(s.bare, ['fsck', '--strict', '--no-dangling']);
    expect(git(s.bare, ['rev-parse', 'refs/heads/main'])).toBe(s.base);
  });

  it('deletes files, dropping a folder left empty, and ignores a deletion of what the base does not have', async () => {
    const s = await served();
    const result = await pushPromotionCommit(
      s.request({
        files: [{ path: 'envs/prod/rollout.yaml', text: PROMOTED }],
        deletions: ['envs/staging/rollout.yaml', 'envs/prod/gone.yaml', 'nowhere/x.yaml'],
      }),
    );
    expect(result).toMatchObject({ pushed: true, outcome: 'created' });
    expect(git(s.bare, ['diff', '--name-status', `${s.base}..${BRANCH}`])).toBe(
      'M\tenvs/prod/rollout.yaml\nD\tenvs/staging/rollout.yaml',
    );
    // envs/staging held only that file: Git keeps no empty folder.
    expect(git(s.bare, ['ls-tree', '--name-only', BRANCH, 'envs/'])).toBe('envs/prod');
    git(s.bare, ['fsck', '--strict', '--no-dangling']);
  });

  it('sends only the objects the base does not have', async () => {
    const s = await served();
    const many: Record<string, string> = {};
    for (let i = 0; i < 300; i += 1)
      many[`envs/prod/generated/config-${i}.yaml`] = `kind: ConfigMap\n# ${i}\n`;
    s.wc.write(many);
    s.wc.commit('many files');
    await s.wc.push(s.bare);
    const objects = (): number => {
      const stats = Object.fromEntries(
        git(s.bare, ['count-objects', '-v'])
          .split('\n')
          .map((line) => line.split(': ')),
      ) as Record<string, string>;
      return Number(stats.count) + Number(stats['in-pack']);
    };
    const before = objects();
    await pushPromotionCommit(s.request());
    // The commit, 2 blobs, and the trees on their paths (root, envs, envs/prod, envs/prod/images).
    expect(objects() - before).toBe(7);
    git(s.bare, ['fsck', '--strict', '--no-dangling']);
  });

  it('keeps an executable file executable when it is replaced', async () => {
    const s = await served();
    const result = await pushPromotionCommit(
      s.request({ files: [{ path: 'scripts/check.sh', text: '#!/bin/sh\nexit 1\n' }] }),
    );
    expect(git(s.bare, ['ls-tree', result.commit, 'scripts/check.sh'])).toMatch(/^100755 blob /);
  });

  it('pushes nothing when the branch already holds this tree on the current base, even from a new cache', async () => {
    const s = await served();
    const first = await pushPromotionCommit(s.request());
    const pushesAfterFirst = s.pushes();
    const again = await pushPromotionCommit(s.request());
    expect(again).toEqual({ ...first, pushed: false, outcome: 'unchanged' });
    const restarted = await pushPromotionCommit(s.request({ cacheDir: join(s.tmp, 'other-cache') }));
    expect(restarted).toEqual({ ...first, pushed: false, outcome: 'unchanged' });
    expect(s.pushes()).toBe(pushesAfterFirst);
    expect(git(s.bare, ['rev-parse', `refs/heads/${BRANCH}`])).toBe(first.commit);
  });

  it('re-parents on a base that moved, and force-updates a branch that holds other files', async () => {
    const s = await served();
    const first = await pushPromotionCommit(s.request());
    expect(first.baseCommit).toBe(s.base);
    s.wc.write({ 'envs/prod/service.yaml': 'kind: Service\n' });
    const newBase = s.wc.commit('a service');
    await s.wc.push(s.bare);
    const second = await pushPromotionCommit(s.request());
    expect(second).toMatchObject({ baseCommit: newBase, pushed: true, outcome: 'updated' });
    expect(git(s.bare, ['rev-list', '--parents', '-n', '1', second.commit])).toBe(
      `${second.commit} ${newBase}`,
    );
    expect(git(s.bare, ['diff', '--name-only', `${newBase}..${BRANCH}`])).toBe(
      'envs/prod/images/new.yaml\nenvs/prod/rollout.yaml',
    );
    expect(blob(s.bare, `${BRANCH}:envs/prod/service.yaml`)).toBe('kind: Service\n');

    // A newer revision: other content, same branch, force-updated (not a descendant of the old one).
    const third = await pushPromotionCommit(
      s.request({ files: [{ path: 'envs/prod/rollout.yaml', text: `${ROLLOUT}# v3\n` }] }),
    );
    expect(third).toMatchObject({ baseCommit: newBase, pushed: true, outcome: 'updated' });
    expect(git(s.bare, ['diff', '--name-only', `${newBase}..${BRANCH}`])).toBe('envs/prod/rollout.yaml');
    expect(() => git(s.bare, ['merge-base', '--is-ancestor', second.commit, third.commit])).toThrow();
    git(s.bare, ['fsck', '--strict', '--no-dangling']);
  });

  it('reports files the base already has as in-base, pushing nothing', async () => {
    const s = await served();
    const result = await pushPromotionCommit(
      s.request({ files: [{ path: 'envs/prod/rollout.yaml', text: ROLLOUT }] }),
    );
    expect(result).toMatchObject({ commit: s.base, baseCommit: s.base, pushed: false, outcome: 'in-base' });
    expect(s.pushes()).toBe(0);
    expect(git(s.bare, ['branch', '--list', 'rollgate/*'])).toBe('');
  });

  it('bad or missing credentials are a typed auth error that never shows the password', async () => {
    const s = await served();
    const wrong = await pushPromotionCommit(
      s.request({ auth: { username: USER, password: 'nope-not-it' } }),
    ).catch((e: unknown) => e);
    expect(wrong).toMatchObject({
      name: 'GitAuthFailedError',
      code: 'git.auth-failed',
      context: { source: 'prod', url: s.url },
    });
    expect(String((wrong as Error).message)).not.toContain('nope-not-it');
    const none = await pushPromotionCommit(s.request({ auth: undefined })).catch((e: unknown) => e);
    expect(none).toMatchObject({ code: 'git.auth-failed' });
    const inUrl = s.url.replace('http://', `http://${USER}:wrong-in-url@`);
    const fromUrl = await pushPromotionCommit(s.request({ url: inUrl, auth: undefined })).catch(
      (e: unknown) => e,
    );
    expect(fromUrl).toMatchObject({ code: 'git.auth-failed', context: { url: s.url } });
    expect(JSON.stringify(fromUrl) + String(fromUrl)).not.toContain('wrong-in-url');
    // Credentials in the URL work as well.
    const ok = await pushPromotionCommit(
      s.request({ url: s.url.replace('http://', `http://${USER}:${PASSWORD}@`), auth: undefined }),
    );
    expect(ok.pushed).toBe(true);
  });

  it('a missing base branch, a missing repository, an unreachable remote', async () => {
    const s = await served();
    await expect(pushPromotionCommit(s.request({ baseBranch: 'release' }))).rejects.toMatchObject({
      code: 'git.ref-not-found',
    });
    await expect(
      pushPromotionCommit(s.request({ url: `${s.server.url}/nothing.git` })),
    ).rejects.toMatchObject({
      code: 'git.repository-not-found',
    });
    const port = await closedLoopbackPort();
    await expect(
      pushPromotionCommit(s.request({ url: `http://127.0.0.1:${port}/apps.git` })),
    ).rejects.toMatchObject({
      code: 'git.unreachable',
    });
  });

  it('a server that only serves reads refuses the push as git.auth-failed (403)', async () => {
    const s = await served();
    const readOnly = await serveGitRepositories({ root: join(s.tmp, 'repos') });
    cleanups.push(() => readOnly.stop());
    await expect(
      pushPromotionCommit(s.request({ url: `${readOnly.url}/apps.git`, auth: undefined })),
    ).rejects.toMatchObject({ code: 'git.auth-failed', context: { step: 'push', status: 403 } });
  });

  it('a push the server refuses (a pre-receive hook) is git.push-rejected', async () => {
    const s = await served();
    mkdirSync(join(s.bare, 'hooks'), { recursive: true });
    writeFileSync(join(s.bare, 'hooks', 'pre-receive'), '#!/bin/sh\necho "branch protected" >&2\nexit 1\n');
    chmodSync(join(s.bare, 'hooks', 'pre-receive'), 0o755);
    await expect(pushPromotionCommit(s.request())).rejects.toMatchObject({
      name: 'GitPushRejectedError',
      code: 'git.push-rejected',
      context: { step: 'push' },
    });
  });

  it('pushes to a local repository path (served in-process for the push)', async () => {
    const s = await served();
    const result = await pushPromotionCommit(s.request({ url: s.bare, auth: undefined }));
    expect(result.pushed).toBe(true);
    expect(git(s.bare, ['rev-parse', `refs/heads/${BRANCH}`])).toBe(result.commit);
  });

  it('fastForward commits onto the base branch itself, and refuses a base that moved since the read', async () => {
    const s = await served();
    const files = [{ path: 'envs/prod/rollout.yaml', text: PROMOTED }];
    const ff = (expectedBase: string): PromotionCommitRequest =>
      s.request({ branch: 'main', fastForward: true, expectedBase, files });
    const result = await pushPromotionCommit(ff(s.base));
    expect(result).toMatchObject({ baseCommit: s.base, pushed: true, outcome: 'updated' });
    expect(git(s.bare, ['rev-parse', 'refs/heads/main'])).toBe(result.commit);
    expect(git(s.bare, ['rev-list', '--parents', '-n', '1', result.commit])).toBe(
      `${result.commit} ${s.base}`,
    );
    expect(git(s.bare, ['for-each-ref', '--format=%(refname)', 'refs/heads/rollgate'])).toBe('');

    // Read at the old tip: pushing would undo whatever the newer commit did to these files.
    const stale = await pushPromotionCommit(ff(s.base)).catch((error: unknown) => error);
    expect(stale).toMatchObject({ code: 'git.push-rejected' });
    expect(git(s.bare, ['rev-parse', 'refs/heads/main'])).toBe(result.commit);

    await expect(pushPromotionCommit(ff(result.commit))).resolves.toMatchObject({
      commit: result.commit,
      pushed: false,
      outcome: 'in-base',
    });
    await expect(
      pushPromotionCommit(s.request({ fastForward: true, expectedBase: result.commit })),
    ).rejects.toThrow(RangeError);
  });

  it('refuses paths outside the repository and the base branch as the target', async () => {
    const s = await served();
    await expect(
      pushPromotionCommit(s.request({ files: [{ path: '../x.yaml', text: '' }] })),
    ).rejects.toThrow(RangeError);
    await expect(
      pushPromotionCommit(s.request({ files: [{ path: '.git/config', text: '' }] })),
    ).rejects.toThrow(RangeError);
    await expect(pushPromotionCommit(s.request({ branch: 'main' }))).rejects.toThrow(RangeError);
    await expect(pushPromotionCommit(s.request({ branch: 'bad name' }))).rejects.toThrow(RangeError);
  });
});
