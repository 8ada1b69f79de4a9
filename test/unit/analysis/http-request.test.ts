// The request headers a metric's `headers: [{key, value}]` list becomes.
import { describe, expect, it } from 'vitest';
import { headersFromList } from '../../../src/analysis/providers/http-request.ts';

describe('headersFromList', () => {
  it('lowercases names, keeps the last value of a name, and never lets __proto__ through', () => {
    const headers = headersFromList([
      { key: 'Authorization', value: 'Bearer a' },
      { key: '__proto__', value: 'polluted' },
      { key: 'X-Scope-OrgID', value: 'team-1' },
      { key: 'authorization', value: 'Bearer b' },
    ]);
    expect(headers).toEqual({ authorization: 'Bearer b', 'x-scope-orgid': 'team-1' });
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
  });
});
