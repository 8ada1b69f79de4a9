// What each provider makes of the events it sends: which branch moved, which repository, or why ignored.
import { describe, expect, it } from 'vitest';
import { bitbucketProvider } from '../../../src/server/webhook-providers/bitbucket.ts';
import { giteaProvider } from '../../../src/server/webhook-providers/gitea.ts';
import { githubProvider } from '../../../src/server/webhook-providers/github.ts';
import { gitlabProvider } from '../../../src/server/webhook-providers/gitlab.ts';
import { genericProvider } from '../../../src/server/webhook-providers/generic.ts';

const serverRepo = {
  links: {
    clone: [
      { href: 'ssh://git@bb.example:7999/ops/deploy.git', name: 'ssh' },
      { href: 'https://bb.example/scm/ops/deploy.git', name: 'http' },
    ],
  },
};

describe('github', () => {
  it('ignores tag pushes, pings and other events', () => {
    const tag = { ref: 'refs/tags/v1', repository: { clone_url: 'https://x/y.git' } };
    expect(githubProvider.interpret({ 'x-github-event': 'push' }, tag)).toMatchObject({ kind: 'ignored' });
    expect(githubProvider.interpret({ 'x-github-event': 'ping' }, {})).toMatchObject({ kind: 'ignored' });
    expect(githubProvider.interpret({ 'x-github-event': 'issues' }, {})).toMatchObject({ kind: 'ignored' });
  });
  it('calls a push without ref invalid', () => {
    expect(githubProvider.interpret({ 'x-github-event': 'push' }, { zen: 'hi' })).toMatchObject({
      kind: 'invalid',
    });
  });
});

describe('gitlab', () => {
  it('ignores tag pushes and unknown events', () => {
    expect(gitlabProvider.interpret({ 'x-gitlab-event': 'Tag Push Hook' }, {})).toMatchObject({
      kind: 'ignored',
    });
    expect(
      gitlabProvider.interpret({ 'x-gitlab-event': 'Push Hook' }, { ref: 'refs/tags/v1' }),
    ).toMatchObject({
      kind: 'ignored',
    });
  });
});

describe('gitea / forgejo', () => {
  it('reads the Forgejo event header when present', () => {
    const body = { ref: 'refs/heads/main', repository: { clone_url: 'https://forgejo.example/a/b.git' } };
    expect(giteaProvider.interpret({ 'x-forgejo-event': 'push' }, body)).toEqual({
      kind: 'push',
      cause: 'push',
      branches: ['main'],
      repositoryUrls: ['https://forgejo.example/a/b.git'],
    });
  });
});

describe('bitbucket', () => {
  it('reads every updated branch of repo:refs_changed and skips deleted ones and tags', () => {
    const body = {
      repository: serverRepo,
      changes: [
        { ref: { id: 'refs/heads/main', type: 'BRANCH' }, type: 'UPDATE' },
        { ref: { id: 'refs/heads/release', type: 'BRANCH' }, type: 'ADD' },
        { ref: { id: 'refs/heads/old', type: 'BRANCH' }, type: 'DELETE' },
        { ref: { id: 'refs/tags/v2', type: 'TAG' }, type: 'ADD' },
      ],
    };
    expect(bitbucketProvider.interpret({ 'x-event-key': 'repo:refs_changed' }, body)).toEqual({
      kind: 'push',
      cause: 'push',
      branches: ['main', 'release'],
      repositoryUrls: ['ssh://git@bb.example:7999/ops/deploy.git', 'https://bb.example/scm/ops/deploy.git'],
    });
  });

  it('reads the target branch of a Server pr:merged and a Cloud pullrequest:fulfilled', () => {
    const merged = { pullRequest: { toRef: { id: 'refs/heads/main', repository: serverRepo } } };
    expect(bitbucketProvider.interpret({ 'x-event-key': 'pr:merged' }, merged)).toMatchObject({
      kind: 'push',
      cause: 'merge',
      branches: ['main'],
    });
    const fulfilled = {
      pullrequest: {
        destination: {
          branch: { name: 'prod' },
          repository: { full_name: 'acme/web', links: { html: { href: 'https://bitbucket.org/acme/web' } } },
        },
      },
    };
    expect(bitbucketProvider.interpret({ 'x-event-key': 'pullrequest:fulfilled' }, fulfilled)).toEqual({
      kind: 'push',
      cause: 'merge',
      branches: ['prod'],
      repositoryUrls: ['https://bitbucket.org/acme/web'],
    });
  });

  it('ignores a Cloud push that only deleted a branch', () => {
    const body = { repository: { full_name: 'acme/web' }, push: { changes: [{ new: null }] } };
    expect(bitbucketProvider.interpret({ 'x-event-key': 'repo:push' }, body)).toEqual({
      kind: 'ignored',
      reason: 'no branch updated',
    });
  });

  it('reads each branch of a Cloud repo:push once, tags left out', () => {
    const body = {
      repository: { full_name: 'acme/web' },
      push: {
        changes: [
          { new: { type: 'branch', name: 'main' } },
          { new: { type: 'tag', name: 'v2' } },
          { new: { type: 'branch', name: 'main' } },
          { new: { type: 'branch', name: 'dev' } },
        ],
      },
    };
    expect(bitbucketProvider.interpret({ 'x-event-key': 'repo:push' }, body)).toEqual({
      kind: 'push',
      cause: 'push',
      branches: ['main', 'dev'],
      repositoryUrls: ['https://bitbucket.org/acme/web'],
    });
  });

  it('ignores a Server repo:refs_changed that only deleted a branch or moved a tag', () => {
    const body = {
      repository: serverRepo,
      changes: [
        { ref: { id: 'refs/heads/old', type: 'BRANCH' }, type: 'DELETE' },
        { refId: 'refs/tags/v3', type: 'ADD' },
      ],
    };
    expect(bitbucketProvider.interpret({ 'x-event-key': 'repo:refs_changed' }, body)).toEqual({
      kind: 'ignored',
      reason: 'no branch updated',
    });
  });

  it('accepts a Cloud hook by the configured hookUuid, braces and case ignored', () => {
    const config = { bitbucket: { hookUuid: '{ABCDEF01-0000-0000-0000-000000000000}' } };
    expect(bitbucketProvider.isConfigured(config)).toBe(true);
    expect(
      bitbucketProvider.verify(
        { 'x-hook-uuid': 'abcdef01-0000-0000-0000-000000000000' },
        Buffer.from('{}'),
        config,
      ),
    ).toEqual({
      ok: true,
    });
    expect(
      bitbucketProvider.verify(
        { 'x-hook-uuid': '{00000000-0000-0000-0000-000000000000}' },
        Buffer.from('{}'),
        config,
      ),
    ).toEqual({
      ok: false,
      reason: 'X-Hook-UUID does not match the configured Bitbucket Cloud hook (webhooks.bitbucket.hookUuid)',
    });
    // A signed delivery cannot be verified without a secret, even when a hook UUID is configured.
    expect(
      bitbucketProvider.verify({ 'x-hub-signature': 'sha256=00' }, Buffer.from('{}'), config),
    ).toMatchObject({ ok: false });
  });
});

describe('bitbucket with both a secret and a hook UUID configured', () => {
  it('refuses a delivery that leaves the signature out and sends the (unsecret) hook UUID instead', () => {
    const hookUuid = '{ABCDEF01-0000-0000-0000-000000000000}';
    const config = { bitbucket: { secret: 'a-long-enough-secret', hookUuid } };
    const verdict = bitbucketProvider.verify({ 'x-hook-uuid': hookUuid }, Buffer.from('{}'), config);
    expect(verdict).toEqual({
      ok: false,
      reason:
        'missing X-Hub-Signature header: webhooks.bitbucket.secret is set, so every delivery must be signed',
    });
  });
});

describe('generic', () => {
  it('accepts refs/heads/ in the branch and refuses a body without repository', () => {
    expect(
      genericProvider.interpret({}, { repository: '/srv/git/apps.git', branch: 'refs/heads/main' }),
    ).toMatchObject({
      kind: 'push',
      branches: ['main'],
    });
    expect(genericProvider.interpret({}, { branch: 'main' })).toMatchObject({ kind: 'invalid' });
  });
});
