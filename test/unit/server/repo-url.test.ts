// Repository URL identity and push-to-source matching.
import { describe, expect, it } from 'vitest';
import { repoUrlKey, sameRepository } from '../../../src/server/repo-url.ts';
import { sourcesForPush } from '../../../src/server/push-router.ts';

describe('repoUrlKey', () => {
  it.each([
    ['https://github.com/acme/apps.git', 'github.com/acme/apps'],
    ['http://github.com/acme/apps', 'github.com/acme/apps'],
    ['https://GitHub.com/Acme/Apps/', 'github.com/acme/apps'],
    ['https://user:s3cret@github.com/acme/apps.git/', 'github.com/acme/apps'],
    ['git@github.com:acme/apps.git', 'github.com/acme/apps'],
    ['ssh://git@github.com:22/acme/apps.git', 'github.com/acme/apps'],
    ['http://127.0.0.1:9000/apps.git', '127.0.0.1/apps'],
    ['https://gitlab.example/group/sub/project.git', 'gitlab.example/group/sub/project'],
  ])('%s → %s', (url, key) => {
    expect(repoUrlKey(url)).toBe(key);
  });

  it('has no key for things that are not repository URLs', () => {
    for (const bad of ['', '   ', 'not a url', 'https://github.com/', 'https://github.com']) {
      expect(repoUrlKey(bad)).toBeUndefined();
    }
  });

  it('tells different repositories apart', () => {
    expect(sameRepository('https://github.com/acme/apps', 'https://github.com/acme/apps-config')).toBe(false);
    expect(sameRepository('https://github.com/acme/apps', 'https://gitlab.com/acme/apps')).toBe(false);
    expect(sameRepository('https://github.com/acme/apps', 'git@github.com:acme/apps.git')).toBe(true);
  });
});

describe('sourcesForPush', () => {
  const sources = [
    { name: 'prod', url: 'https://github.com/acme/apps.git', branch: 'main' },
    { name: 'prod-eu', url: 'git@github.com:acme/apps.git', branch: 'main' },
    { name: 'staging', url: 'https://github.com/acme/apps', branch: 'staging' },
    { name: 'other', url: 'https://github.com/acme/other', branch: 'main' },
  ];

  it('selects every source on the pushed repository and branch, however its URL is written', () => {
    const matched = sourcesForPush(
      { repositoryUrls: ['https://github.com/acme/apps'], branch: 'main' },
      sources,
    );
    expect(matched.map((s) => s.name)).toEqual(['prod', 'prod-eu']);
  });

  it('selects nothing for an untracked branch or repository', () => {
    expect(
      sourcesForPush({ repositoryUrls: ['https://github.com/acme/apps'], branch: 'dev' }, sources),
    ).toEqual([]);
    expect(
      sourcesForPush({ repositoryUrls: ['https://github.com/acme/nope'], branch: 'main' }, sources),
    ).toEqual([]);
  });
});

describe('local repositories', () => {
  it('treats an absolute path and its file:// URL as the same repository', () => {
    expect(repoUrlKey('/tmp/demo/apps.git')).toBe('file:///tmp/demo/apps');
    expect(sameRepository('/tmp/demo/apps.git/', 'file:///tmp/demo/apps')).toBe(true);
    expect(sameRepository('/tmp/demo/apps', '/tmp/demo/other')).toBe(false);
  });
});
