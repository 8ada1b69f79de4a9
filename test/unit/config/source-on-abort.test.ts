// sources[].onAbort.revert: the keys of an abort written back, and the errors that name them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.ts';

function load(source: string): () => ReturnType<typeof loadConfig> {
  const file = join(mkdtempSync(join(tmpdir(), 'rollgate-on-abort-')), 'rollgate.yaml');
  writeFileSync(file, `sources:\n  - { name: staging, url: https://git.example/deploy.git, ${source} }\n`);
  return () => loadConfig({ file, env: { FORGE_TOKEN: 'forge-token-0123456789' } });
}

function problemsOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return String((error as Error).message);
  }
  return '';
}

const PR = 'provider: github, apiUrl: https://api.github.com, repository: acme/deploy, tokenEnv: FORGE_TOKEN';

describe('sources[].onAbort', () => {
  it('takes a revert pull request with the forge keys of a promotion, defaults filled in', () => {
    const config = load(`onAbort: { revert: { pullRequest: { ${PR}, labels: [revert] } } }`)();
    expect(config.sources[0]?.onAbort?.revert.pullRequest).toMatchObject({
      provider: 'github',
      repository: 'acme/deploy',
      labels: ['revert'],
      reviewers: [],
      author: { name: 'Rollgate' },
    });
  });

  it('reuses the source commitStatus forge when no pullRequest is given', () => {
    const config = load(`commitStatus: { ${PR} }, onAbort: { revert: {} }`)();
    expect(config.sources[0]?.onAbort).toEqual({ revert: {} });
  });

  it('refuses a revert without any forge, naming the key', () => {
    expect(problemsOf(load('onAbort: { revert: {} }'))).toMatch(
      /sources\[0\]\.onAbort\.revert\.pullRequest: a revert pull request needs a forge/,
    );
  });

  it('refuses two tokens, a plain-http token and unknown keys, naming the key', () => {
    expect(
      problemsOf(load(`onAbort: { revert: { pullRequest: { ${PR}, token: forge-token-0123456789 } } }`)),
    ).toMatch(/sources\[0\]\.onAbort\.revert\.pullRequest: give exactly one of token/);
    expect(
      problemsOf(
        load(
          'onAbort: { revert: { pullRequest: { provider: gitea, apiUrl: http://gitea.example/api/v1, repository: a/b, tokenEnv: FORGE_TOKEN } } }',
        ),
      ),
    ).toMatch(
      /sources\[0\]\.onAbort\.revert\.pullRequest\.apiUrl: the revert pull-request token would be sent in clear/,
    );
    expect(problemsOf(load(`onAbort: { revert: { pullRequest: { ${PR} }, merge: true } }`))).toMatch(
      /sources\[0\]\.onAbort\.revert/,
    );
  });
});
