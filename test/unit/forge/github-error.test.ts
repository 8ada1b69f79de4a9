// toForgeError: GitHub's answers to stable codes, with nothing of the request kept.
import { describe, expect, it } from 'vitest';
import { ForgeError } from '../../../src/forge/forge-error.ts';
import { toForgeError } from '../../../src/forge/github-error.ts';

/** An Octokit RequestError as @octokit/request builds one (request part included, auth already redacted). */
function httpError(
  status: number,
  data: unknown,
  headers: Record<string, string> = {},
  response = true,
): Error {
  const error = new Error(typeof data === 'object' && data && 'message' in data ? String(data.message) : 'x');
  return Object.assign(error, {
    name: 'HttpError',
    status,
    request: {
      method: 'GET',
      url: 'https://api.github.com/repos/o/r',
      headers: { authorization: 'token [REDACTED]' },
    },
    ...(response ? { response: { status, headers, data, url: 'https://api.github.com/repos/o/r' } } : {}),
  });
}

const where = { repository: 'o/r', operation: 'getPullRequest' };

describe('toForgeError', () => {
  const rows: Array<{ name: string; error: Error; code: ForgeError['code']; message?: RegExp }> = [
    {
      name: '401 bad credentials',
      error: httpError(401, { message: 'Bad credentials' }),
      code: 'forge.unauthorized',
    },
    {
      name: '403 missing permission',
      error: httpError(403, { message: 'Resource not accessible by personal access token' }),
      code: 'forge.unauthorized',
    },
    {
      name: '403 primary rate limit',
      error: httpError(
        403,
        { message: 'API rate limit exceeded' },
        { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1767225600' },
      ),
      code: 'forge.rate_limited',
      message: /resets at 2026-01-01T00:00:00.000Z/,
    },
    {
      name: '403 secondary rate limit',
      error: httpError(
        403,
        { message: 'You have exceeded a secondary rate limit.' },
        { 'retry-after': '30' },
      ),
      code: 'forge.rate_limited',
      message: /retry after 30 s/,
    },
    {
      name: '429 without headers',
      error: httpError(429, { message: 'Too Many Requests' }),
      code: 'forge.rate_limited',
    },
    { name: '404', error: httpError(404, { message: 'Not Found' }), code: 'forge.not_found' },
    {
      name: '405 not mergeable',
      error: httpError(405, { message: 'Pull Request is not mergeable' }),
      code: 'forge.conflict',
    },
    {
      name: '409 head moved',
      error: httpError(409, { message: 'Head branch was modified.' }),
      code: 'forge.conflict',
    },
    {
      name: '422 exists, with the errors[] detail',
      error: httpError(422, {
        message: 'Validation Failed',
        errors: [
          { resource: 'PullRequest', code: 'custom', message: 'A pull request already exists for o:b.' },
        ],
      }),
      code: 'forge.conflict',
      message: /Validation Failed: A pull request already exists for o:b\./,
    },
    {
      name: '422 field error without message',
      error: httpError(422, {
        message: 'Validation Failed',
        errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }],
      }),
      code: 'forge.conflict',
      message: /head: invalid/,
    },
    { name: '502', error: httpError(502, { message: 'Server Error' }), code: 'forge.unavailable' },
    {
      name: 'network (no response)',
      error: httpError(500, 'fetch failed', {}, false),
      code: 'forge.unavailable',
      message: /network/,
    },
    {
      name: '400',
      error: httpError(400, { message: 'Problems parsing JSON' }),
      code: 'forge.invalid_response',
    },
    {
      name: 'abort',
      error: Object.assign(new Error('aborted'), { name: 'AbortError' }),
      code: 'forge.unavailable',
    },
    { name: 'anything else', error: new TypeError('boom'), code: 'forge.invalid_response' },
  ];

  for (const row of rows) {
    it(row.name, () => {
      const mapped = toForgeError(row.error, where);
      expect(mapped).toBeInstanceOf(ForgeError);
      expect(mapped.code).toBe(row.code);
      expect(mapped.context).toMatchObject({
        provider: 'github',
        repository: 'o/r',
        operation: 'getPullRequest',
      });
      if (row.message) expect(mapped.message).toMatch(row.message);
    });
  }

  it('keeps the status of an answer, none for a connection failure', () => {
    expect(toForgeError(httpError(404, { message: 'Not Found' }), where).context.status).toBe(404);
    expect(toForgeError(httpError(500, 'fetch failed', {}, false), where).context.status).toBeUndefined();
  });

  it('does not keep the Octokit error (its request part) as the cause', () => {
    const mapped = toForgeError(httpError(401, { message: 'Bad credentials' }), where);
    expect(mapped.cause).toBeUndefined();
    expect(JSON.stringify(mapped)).not.toContain('authorization');
  });

  it('passes a ForgeError through unchanged', () => {
    const original = new ForgeError('forge.conflict', 'x', {
      provider: 'github',
      repository: 'o/r',
      operation: 'merge',
    });
    expect(toForgeError(original, where)).toBe(original);
  });
});
