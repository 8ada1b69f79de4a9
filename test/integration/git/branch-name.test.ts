// The branch-name rule (src/git/branch-name.ts) against Git's own: every name it accepts, `git check-ref-format
// --branch` accepts too, so a name that passes never fails later inside git; and the names that would escape
// refs/heads/ or reach git as an option are refused; localBranchSha (src/git/local-ref.ts) reads no ref for them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isBranchName } from '../../../src/git/branch-name.ts';
import { localBranchSha, localRefSha } from '../../../src/git/local-ref.ts';
import { gitEnv } from '../../support/git-fixtures.ts';

function gitAccepts(name: string): boolean {
  try {
    execFileSync('git', ['check-ref-format', '--branch', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const NAMES = [
  'main',
  'release/1.2',
  'rollgate/promote-prod-abc123',
  'feature+x',
  'feature_x.y',
  'ünïcode',
  'a@b',
  '',
  '-rf',
  '--upload-pack=x',
  '../escape',
  'a/../b',
  'a..b',
  'a//b',
  '/a',
  'a/',
  'a.',
  '.hidden',
  'a/.hidden',
  'x.lock',
  'a/x.lock/b',
  'a@{1}',
  'with space',
  'tab\there',
  'tilde~1',
  'caret^',
  'colon:x',
  'question?',
  'star*',
  'bracket[',
  'back\\slash',
  'del\u007f',
  'nul\u0001',
];

describe('isBranchName', () => {
  it('accepts only names git accepts as branches', () => {
    const acceptedByUsOnly = NAMES.filter((name) => isBranchName(name) && !gitAccepts(name));
    expect(acceptedByUsOnly).toEqual([]);
  });

  it('accepts the plain names forges and promotions use, refuses escapes and options', () => {
    for (const name of ['main', 'release/1.2', 'rollgate/promote-prod-abc123', 'feature+x', 'ünïcode'])
      expect(isBranchName(name), name).toBe(true);
    for (const name of ['', '-rf', '--upload-pack=x', '../escape', 'a/../b', '.hidden', 'x.lock', 'a@{1}'])
      expect(isBranchName(name), name).toBe(false);
  });
});

describe('localBranchSha', () => {
  it("answers a branch's commit, and nothing for a name that would read a file outside refs/heads/", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rollgate-local-ref-'));
    try {
      const git = (...args: string[]): string =>
        execFileSync('git', args, { cwd: dir, env: gitEnv, encoding: 'utf8' }).trim();
      git('init', '-q', '-b', 'main');
      git('commit', '-q', '--allow-empty', '-m', 'first');
      const gitdir = join(dir, '.git');
      const head = git('rev-parse', 'HEAD');
      expect(await localBranchSha(gitdir, 'main')).toBe(head);
      expect(await localBranchSha(gitdir, 'absent')).toBeUndefined();
      // refs/heads/../../HEAD is the repository's HEAD file: read as a ref it names the same commit.
      expect(await localRefSha(gitdir, 'refs/heads/../../HEAD')).toBe(head);
      expect(await localBranchSha(gitdir, '../../HEAD')).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
