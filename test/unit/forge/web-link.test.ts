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

/** A pull request as each forge's API shows it, with `url` as its web link. */
const answers: Record<ForgeProvider, { path: string; body: (url: string) => Record<string, unknown> }> = {
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
};

describe.each<ForgeProvider>(['github', 'gitlab', 'gitea'])('a %s pull request link', (provider) => {
  const { forgeWith, closeStub } = scriptedForges<Forge>((url, options) =>
    createForge({
      provider,
      apiUrl: provider === 'github' ? url : `${url}${provider === 'gitlab' ? '/api/v4' : '/api/v1'}`,
      repository: 'acme/deploy',
      token: 'forge-token',
      ...options,
    }),
  );

  it('that is not http(s) is dropped; an https one is kept', async () => {
    const answer = answers[provider];
    for (const [link, want] of [
      [HOSTILE, ''],
      ['https://forge.example/acme/deploy/pull/4', 'https://forge.example/acme/deploy/pull/4'],
    ] as const) {
      const { forge } = await forgeWith((req) =>
        req.path === answer.path ? { body: answer.body(link) } : undefined,
      );
      const pull = await forge.getPullRequest(4);
      expect(pull.url).toBe(want);
      expect(pull.number).toBe(4);
      await closeStub();
    }
  });
});
