// The dashboard's contract: config errors naming the key, tokens resolved at start, bearer, Host and Origin checks.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';
import { carriesToken, dashboardAccess } from '../../../src/server/dashboard/dashboard-access.ts';
import {
  hostAllowed,
  hostNameOf,
  isLoopbackName,
  sameOrigin,
} from '../../../src/server/dashboard/request-authority.ts';

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
  it('defaults to enabled, no token, no extra host names, actions off', () => {
    expect(loadConfig({ env: {} }).dashboard).toEqual({
      enabled: true,
      allowedHosts: [],
      actions: { enabled: false },
    });
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
    expect(dashboardAccess(config, { host: '0.0.0.0' }, { READ: 'r', ACT: 'a' })).toEqual({
      readToken: 'r',
      openReads: false,
      actions: { enabled: true, token: 'a' },
    });
    expect(() => dashboardAccess(config, { host: '0.0.0.0' }, { READ: 'r' })).toThrow(
      /dashboard\.actions\.tokenEnv/,
    );
  });

  it('opens reads and checks the Host on a loopback bind only; listed names turn the Host check on anywhere', () => {
    const plain = loadConfig({ env: {} }).dashboard;
    expect(dashboardAccess(plain, { host: '0.0.0.0' }, {})).toEqual({
      openReads: false,
      actions: { enabled: false },
    });
    expect(dashboardAccess(plain, { host: '::' }, {}).openReads).toBe(false);
    for (const host of ['127.0.0.1', '::1', 'localhost'])
      expect(dashboardAccess(plain, { host }, {}), host).toEqual({
        openReads: true,
        actions: { enabled: false },
        hosts: { allowed: [] },
      });
    const listed = loadConfig({
      env: {},
      overrides: { 'dashboard.allowedHosts': '["rollgate.example.com"]' },
    }).dashboard;
    expect(dashboardAccess(listed, { host: '0.0.0.0' }, {}).hosts).toEqual({
      allowed: ['rollgate.example.com'],
    });
    expect(problems({ 'dashboard.allowedHosts': '["rollgate.example.com:8080"]' })).toEqual([
      expect.stringMatching(
        /^dashboard\.allowedHosts\[0\]: must be a host name or an IP address, without port/,
      ),
    ]);
  });
});

describe('request authority', () => {
  it('knows the names that can only mean this machine', () => {
    for (const name of ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'])
      expect(isLoopbackName(name), name).toBe(true);
    for (const name of [
      'attacker.example',
      'localhost.attacker.example',
      '10.0.0.1',
      '0.0.0.0',
      '::',
      '128.0.0.1',
    ])
      expect(isLoopbackName(name), name).toBe(false);
  });

  it('reads the host name of a Host header, and checks it against loopback and the allowed names', () => {
    expect(hostNameOf('Example.COM:8080')).toBe('example.com');
    expect(hostNameOf('[::1]:3100')).toBe('::1');
    expect(hostNameOf('a b')).toBeUndefined();
    expect(hostAllowed('127.0.0.1:3100', [])).toBe(true);
    expect(hostAllowed('localhost:3100', [])).toBe(true);
    expect(hostAllowed('[::1]:3100', [])).toBe(true);
    expect(hostAllowed('attacker.example:3100', [])).toBe(false);
    expect(hostAllowed('box.lan:3100', ['box.lan'])).toBe(true);
    expect(hostAllowed('BOX.LAN', ['box.lan'])).toBe(true);
    expect(hostAllowed(undefined, ['box.lan'])).toBe(false);
    expect(hostAllowed('127.0.0.1@attacker.example', [])).toBe(false);
  });

  it("accepts a verb from the page's own origin or from a client without Origin, nothing else", () => {
    const host = '127.0.0.1:3100';
    expect(sameOrigin({ host, origin: 'http://127.0.0.1:3100', 'sec-fetch-site': 'same-origin' })).toBe(true);
    expect(sameOrigin({ host })).toBe(true);
    expect(sameOrigin({ host, origin: 'http://attacker.example' })).toBe(false);
    expect(sameOrigin({ host, origin: 'http://127.0.0.1:9999' })).toBe(false);
    expect(sameOrigin({ host, origin: 'null' })).toBe(false);
    expect(sameOrigin({ host, 'sec-fetch-site': 'cross-site' })).toBe(false);
    expect(sameOrigin({ host, origin: 'http://127.0.0.1:3100', 'sec-fetch-site': 'same-site' })).toBe(false);
    expect(sameOrigin({ origin: 'http://127.0.0.1:3100' })).toBe(false);
  });
});

describe('carriesToken', () => {
  it('accepts only the exact bearer token', () => {
    expect(carriesToken(request('Bearer s3cret'), 's3cret')).toBe(true);
    expect(carriesToken(request('bearer s3cret'), 's3cret')).toBe(true);
    expect(carriesToken(request('Bearer s3cre'), 's3cret')).toBe(false);
    expect(carriesToken(request('Bearer s3cretX'), 's3cret')).toBe(false);
    expect(carriesToken(request('Basic s3cret'), 's3cret')).toBe(false);
    expect(carriesToken(request(), 's3cret')).toBe(false);
  });
});
