// The Git source errors: each kind's name and code, the context it carries, and how its message shows it.
import { describe, expect, it } from 'vitest';
import { GitAuthFailedError } from '../../../src/git/errors/git-auth-failed.ts';
import type { GitErrorContext } from '../../../src/git/errors/git-error-context.ts';
import { GitObjectMissingError } from '../../../src/git/errors/git-object-missing.ts';
import { GitProtocolError } from '../../../src/git/errors/git-protocol.ts';
import { GitRefNotFoundError } from '../../../src/git/errors/git-ref-not-found.ts';
import { GitRepositoryNotFoundError } from '../../../src/git/errors/git-repository-not-found.ts';
import { GitSourceError } from '../../../src/git/errors/git-source-error.ts';
import { GitUnreachableError } from '../../../src/git/errors/git-unreachable.ts';

const context: GitErrorContext = {
  source: 'apps',
  url: 'https://git.example/apps.git',
  step: 'fetch',
  status: 503,
};

describe('Git source errors', () => {
  it.each([
    [GitAuthFailedError, 'GitAuthFailedError', 'git.auth-failed'],
    [GitObjectMissingError, 'GitObjectMissingError', 'git.object-missing'],
    [GitProtocolError, 'GitProtocolError', 'git.protocol'],
    [GitRefNotFoundError, 'GitRefNotFoundError', 'git.ref-not-found'],
    [GitRepositoryNotFoundError, 'GitRepositoryNotFoundError', 'git.repository-not-found'],
    [GitUnreachableError, 'GitUnreachableError', 'git.unreachable'],
  ])('%o says which source, remote and step, with its own name and code', (Kind, name, code) => {
    const cause = new Error('socket hang up');
    const error = new Kind('server error 503', context, { cause });
    expect(error).toBeInstanceOf(GitSourceError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.context).toEqual(context);
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('server error 503 (source apps, https://git.example/apps.git, fetch)');
    expect(String(error)).toBe(
      `${name}: server error 503 (source apps, https://git.example/apps.git, fetch)`,
    );
  });
});
