// The git CLI as the demo runs it: no user or system config, a fixed identity, never blocking the event loop.
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { DemoGitError } from './demo-git-error.ts';

/** Git without the user's or the system's config (no hooks, signing or editors); a fixed identity. */
function gitEnvironment(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tmpdir(),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Rollgate Demo',
    GIT_AUTHOR_EMAIL: 'demo@rollgate.invalid',
    GIT_COMMITTER_NAME: 'Rollgate Demo',
    GIT_COMMITTER_EMAIL: 'demo@rollgate.invalid',
  };
}

/**
 * Runs git in `cwd` and returns its trimmed stdout; a non-zero exit is a DemoGitError. Asynchronous because
 * the servers answering git (smart HTTP, the demo forge) live in this same process.
 */
export function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: gitEnvironment(), encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new DemoGitError(args, stderr || error.message));
      else resolve(stdout.trim());
    });
  });
}
