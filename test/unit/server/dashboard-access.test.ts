// The dashboard's contract: config errors naming the key, tokens resolved at start, bearer checks.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';
import { carriesToken, dashboardAccess } from '../../../src/server/dashboard/dashboard-access.ts';

const request = (authorization?: string): IncomingMessage =>
  ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;

function problems(overrides: Record<string, unknown>): string[] {
  try {
    loadConfig({ env: {}, overrides });
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

describe('dashboard config', () => {
  it('defaults to enabled, reads open, actions off', () => {
    expect(loadConfig({ env: {} }).dashboard).toEqual({ enabled: true, actions: { enabled: false } });
  });

  it('refuses actions without a token, naming dashboard.actions.tokenEnv', () => {
    expect(problems({ 'dashboard.actions.enabled': 'true' })).toEqual([
      expect.stringMatching(/^dashboard\.actions\.tokenEnv: actions\.enabled needs a token/),
    ]);
    expect(problems({ 'dashboard.actions.enabled': 'true', 'dashboard.actions.tokenEnv': 'T' })).toEqual([]);
  });

  it('refuses two sources for one token, and unknown keys', () => {
    expect(problems({ 'dashboard.readTokenEnv': 'A', 'dashboard.readTokenFile': '/a' })).toEqual([
      expect.stringMatching(/^dashboard\.readTokenFile: give at most one/),
    ]);
    expect(problems({ 'dashboard.actions': '{"enabled":true,"token":"inline"}' }).join('\n')).toMatch(
      /dashboard\.actions/,
    );
  });

  it('resolves tokens at start and names the key of one that is missing', () => {
    const config = loadConfig({
      env: {},
      overrides: {
        'dashboard.readTokenEnv': 'READ',
        'dashboard.actions.enabled': 'true',
        'dashboard.actions.tokenEnv': 'ACT',
      },
    }).dashboard;
    expect(dashboardAccess(config, { READ: 'r', ACT: 'a' })).toEqual({
      readToken: 'r',
      actions: { enabled: true, token: 'a' },
    });
    expect(() => dashboardAccess(config, { READ: 'r' })).toThrow(/dashboard\.actions\.tokenEnv/);
  });
});

describe('carriesToken', () => {
  it('accepts only the exact bearer token, and anything when none is configured', () => {
    expect(carriesToken(request('Bearer s3cret'), 's3cret')).toBe(true);
    expect(carriesToken(request('bearer s3cret'), 's3cret')).toBe(true);
    expect(carriesToken(request('Bearer s3cre'), 's3cret')).toBe(false);
    expect(carriesToken(request('Bearer s3cretX'), 's3cret')).toBe(false);
    expect(carriesToken(request('Basic s3cret'), 's3cret')).toBe(false);
    expect(carriesToken(request(), 's3cret')).toBe(false);
    expect(carriesToken(request(), undefined)).toBe(true);
  });
});
