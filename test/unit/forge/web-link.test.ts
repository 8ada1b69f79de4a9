// Issue 26 (low): a pull request link a forge answers with is written only when it is http(s).
import { describe, expect, it } from 'vitest';
import { createForge } from '../../../src/forge/create-forge.ts';
import type { Forge, ForgeProvider } from '../../../src/forge/forge.ts';
import { webLink } from '../../../src/forge/web-link.ts';
import { scriptedForges } from './scripted-forge.ts';

describe('webLink', () => {
  it.each([
    'https://github.com/acme/deploy/pull/12',
    'http://gitea.internal:3000/acme/deploy/pulls/4',
    'https://gitlab.example/group/sub/app/-/merge_requests/5',
  ])('keeps %s', (link) => {
    expect(webLink(link)).toBe(link);
  });

  it.each([
    ['a script', 'javascript:alert(document.cookie)'],
    ['a script in capitals', 'JavaScript:alert(1)'],
    ['data', 'data:text/html,<script>alert(1)</script>'],
    ['a relative path', '/acme/deploy/pull/12'],
    ['a scheme-relative URL', '//evil.example/pull/12'],
    ['another scheme', 'ftp://forge.example/pull/12'],
    ['credentials', 'https://user:secret@forge.example/pull/12'],
    ['whitespace', 'https://forge.example/pull/12 javascript:alert(1)'],
    ['a line break', 'https://forge.example/pull/12\nhttps://evil.example'],
    ['empty', ''],
    ['not a string', 12],
    ['too long', `https://forge.example/${'a'.repeat(3000)}`],
  ])('drops %s', (_what, link) => {
    expect(webLink(link)).toBeUndefined();
  });
});

const SHA = 'a'.repeat(40);
const HOSTILE = 'javascript:alert(document.cookie)';

/**
 * A pull request as each forge's API shows it, with `url` as its web link (Azure DevOps: its repository's web
 * page, which the pull request's link is made of), and the API root under the stub's URL.
 */
const answers: Record<
  ForgeProvider,
  {
    root?: string;
    path: string;
    body: (url: string) => Record<string, unknown>;
    link?: (url: string) => string;
  }
> = {
  github: {
    path: '/repos/acme/deploy/pulls/4',
    body: (url) => ({
      number: 4,
      html_url: url,
      title: 'Promote web to 2.0.0',
      body: '',
      state: 'open',
      head: { ref: 'rollgate/promote/p/web', sha: SHA },
      base: { ref: 'main', sha: SHA },
      labels: [],
      draft: false,
    }),
  },
  gitlab: {
    path: '/api/v4/projects/acme%2Fdeploy/merge_requests/4',
    body: (url) => ({
      id: 900,
      iid: 4,
      project_id: 42,
      title: 'Promote web to 2.0.0',
      description: '',
      state: 'opened',
      web_url: url,
      source_branch: 'rollgate/promote/p/web',
      target_branch: 'main',
      source_project_id: 42,
      target_project_id: 42,
      sha: SHA,
      labels: [],
      draft: false,
    }),
  },
  gitea: {
    path: '/api/v1/repos/acme/deploy/pulls/4',
    body: (url) => ({
      id: 301,
      number: 4,
      html_url: url,
      title: 'Promote web to 2.0.0',
      body: '',
      state: 'open',
      merged: false,
      head: { ref: 'rollgate/promote/p/web', sha: SHA, repo_id: 7 },
      base: { ref: 'main', sha: SHA, repo_id: 7 },
      labels: [],
    }),
  },
  'bitbucket-cloud': {
    root: '/2.0',
    path: '/2.0/repositories/acme/deploy/pullrequests/4',
    body: (url) => ({
      type: 'pullrequest',
      id: 4,
      title: 'Promote web to 2.0.0',
      description: '',
      state: 'OPEN',
      source: { branch: { name: 'rollgate/promote/p/web' }, commit: { hash: SHA } },
      destination: { branch: { name: 'main' }, commit: { hash: SHA } },
      links: { html: { href: url } },
    }),
  },
  'bitbucket-datacenter': {
    root: '',
    path: '/rest/api/1.0/projects/acme/repos/deploy/pull-requests/4',
    body: (url) => ({
      id: 4,
      version: 0,
      title: 'Promote web to 2.0.0',
      state: 'OPEN',
      fromRef: { id: 'refs/heads/rollgate/promote/p/web', latestCommit: SHA },
      toRef: { id: 'refs/heads/main', latestCommit: SHA },
      links: { self: [{ href: url }] },
    }),
  },
  'azure-devops': {
    root: '/org',
    path: '/org/acme/_apis/git/repositories/deploy/pullrequests/4',
    body: (url) => ({
      pullRequestId: 4,
      title: 'Promote web to 2.0.0',
      description: '',
      status: 'active',
      sourceRefName: 'refs/heads/rollgate/promote/p/web',
      targetRefName: 'refs/heads/main',
      lastMergeSourceCommit: { commitId: SHA },
      repository: { id: 'r1', webUrl: url },
    }),
    link: (url) => `${url}/pullrequest/4`,
  },
};

describe.each<ForgeProvider>([
  'github',
  'gitlab',
  'gitea',
  'bitbucket-cloud',
  'bitbucket-datacenter',
  'azure-devops',
])('a %s pull request link', (provider) => {
  const root = (): string =>
    answers[provider].root ?? (provider === 'github' ? '' : provider === 'gitlab' ? '/api/v4' : '/api/v1');
  const { forgeWith, closeStub } = scriptedForges<Forge>((url, options) =>
    createForge({
      provider,
      apiUrl: `${url}${root()}`,
      repository: 'acme/deploy',
      token: 'forge-token',
      ...options,
    }),
  );

  it('that is not http(s) is dropped; an https one is kept', async () => {
    const answer = answers[provider];
    const safe = 'https://forge.example/acme/deploy/pull/4';
    for (const [link, want] of [
      [HOSTILE, ''],
      [safe, answer.link?.(safe) ?? safe],
    ] as const) {
      const { forge } = await forgeWith((req) =>
        req.path.split('?')[0] === answer.path ? { body: answer.body(link) } : undefined,
      );
      const pull = await forge.getPullRequest(4);
      expect(pull.url).toBe(want);
      expect(pull.number).toBe(4);
      await closeStub();
    }
  });
});
