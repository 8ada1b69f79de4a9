// Dashboard sign-in's pure parts: its configuration's errors naming the key, the signed cookies, and the
// Kubernetes identity read from an ID token's claims as kube-apiserver's --oidc-* flags read it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';
import { SecretUnavailableError } from '../../../src/config/secret-source.ts';
import { dashboardAccess } from '../../../src/server/dashboard/dashboard-access.ts';
import {
  cookieOf,
  openSession,
  openSignInState,
  sealCookie,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  setCookie,
} from '../../../src/server/dashboard/dashboard-session.ts';
import { kubeIdentityOf, OidcIdentityError } from '../../../src/server/dashboard/oidc-identity.ts';

const OIDC = {
  issuer: 'https://idp.example.com',
  clientId: 'rollgate',
  clientSecretEnv: 'OIDC_SECRET',
  redirectUrl: 'https://rollgate.example.com/ui/auth/callback',
  sessionKeyEnv: 'OIDC_KEY',
};

/** The configuration with this dashboard.oidc section, read from a file as Rollgate reads it. */
function withOidc(oidc: Record<string, unknown>): ReturnType<typeof loadConfig> {
  const file = join(mkdtempSync(join(tmpdir(), 'rollgate-oidc-')), 'rollgate.yaml');
  writeFileSync(file, JSON.stringify({ dashboard: { oidc } }));
  return loadConfig({ file, env: {} });
}

function problems(oidc: Record<string, unknown>): string[] {
  try {
    withOidc(oidc);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

describe('dashboard.oidc config', () => {
  it('defaults as kube-apiserver: scopes openid profile email groups, user from email, groups from groups', () => {
    const oidc = withOidc(OIDC).dashboard.oidc;
    expect(oidc).toMatchObject({
      scopes: ['openid', 'profile', 'email', 'groups'],
      usernameClaim: 'email',
      groupsClaim: 'groups',
      sessionSeconds: 28_800,
    });
  });

  it('names the key of each mistake', () => {
    const { clientSecretEnv: _s, ...noSecret } = OIDC;
    expect(problems(noSecret)).toEqual([
      'dashboard.oidc.clientSecretEnv: give exactly one of clientSecretEnv, clientSecretFile',
    ]);
    expect(problems({ ...OIDC, sessionKeyFile: '/k' })).toEqual([
      'dashboard.oidc.sessionKeyEnv: give exactly one of sessionKeyEnv, sessionKeyFile',
    ]);
    expect(problems({ ...OIDC, issuer: 'http://idp.example.com' })).toEqual([
      'dashboard.oidc.issuer: must be https (http only on loopback)',
    ]);
    expect(problems({ ...OIDC, redirectUrl: 'https://rollgate.example.com/callback' })).toEqual([
      "dashboard.oidc.redirectUrl: must end in the dashboard's callback path /ui/auth/callback",
    ]);
    expect(problems({ ...OIDC, scopes: ['email'] })).toEqual(['dashboard.oidc.scopes: must include openid']);
    expect(problems({ ...OIDC, clientSecret: 'inline' })[0]).toMatch(/^dashboard\.oidc: .*clientSecret/);
  });

  it('refuses at start a missing secret or a short session key, naming the key, never the value', () => {
    const config = withOidc(OIDC).dashboard;
    const bind = { host: '0.0.0.0' };
    expect(() => dashboardAccess(config, bind, { OIDC_KEY: 'k'.repeat(32) })).toThrow(
      /dashboard\.oidc\.clientSecretEnv.*OIDC_SECRET is not set/,
    );
    const short = (): unknown =>
      dashboardAccess(config, bind, { OIDC_SECRET: 's3cret', OIDC_KEY: 'short-key' });
    expect(short).toThrow(SecretUnavailableError);
    expect(short).toThrow(/dashboard\.oidc\.sessionKeyEnv.*at least 32/);
    expect(short).not.toThrow(/short-key|s3cret/);
    const access = dashboardAccess(config, bind, { OIDC_SECRET: 's3cret', OIDC_KEY: 'k'.repeat(32) });
    expect(access.oidc?.clientSecret).toBe('s3cret');
  });
});

describe('signed cookies', () => {
  const KEY = 'k'.repeat(40);
  const session = { user: 'alice@example.com', groups: ['team-a'], expires: 2_000, csrf: 'c'.repeat(43) };

  it('open with the same key and purpose, before they expire', () => {
    const sealed = sealCookie(KEY, SESSION_COOKIE, session);
    expect(openSession(KEY, sealed, 1_999)).toEqual(session);
    expect(openSession(KEY, sealed, 2_000)).toBeUndefined();
    expect(openSession('o'.repeat(40), sealed, 1_000)).toBeUndefined();
  });

  it('refuse a changed body (another group added) or a sign-in state shown as a session', () => {
    const sealed = sealCookie(KEY, SESSION_COOKIE, session);
    const [, mac] = sealed.split('.');
    const forged = Buffer.from(JSON.stringify({ ...session, groups: ['team-a', 'admins'] })).toString(
      'base64url',
    );
    expect(openSession(KEY, `${forged}.${mac}`, 1_000)).toBeUndefined();
    const state = sealCookie(KEY, SIGN_IN_COOKIE, { state: 's', nonce: 'n', verifier: 'v', expires: 2_000 });
    expect(openSignInState(KEY, state, 1_000)).toEqual({
      state: 's',
      nonce: 'n',
      verifier: 'v',
      expires: 2_000,
    });
    expect(openSession(KEY, state, 1_000)).toBeUndefined();
    expect(openSession(KEY, 'garbage', 1_000)).toBeUndefined();
  });

  it('are HttpOnly, host-only, SameSite as asked, Secure over https', () => {
    expect(setCookie('a', 'b', { maxAge: 60, sameSite: 'Strict', secure: true, path: '/' })).toBe(
      'a=b; Path=/; Max-Age=60; HttpOnly; SameSite=Strict; Secure',
    );
    expect(setCookie('a', 'b', { maxAge: 600, sameSite: 'Lax', secure: false, path: '/ui/auth/' })).toBe(
      'a=b; Path=/ui/auth/; Max-Age=600; HttpOnly; SameSite=Lax',
    );
    expect(cookieOf('x=1; rollgate_session=abc.def; y=2', SESSION_COOKIE)).toBe('abc.def');
    expect(cookieOf('rollgate_session_other=1', SESSION_COOKIE)).toBeUndefined();
  });
});

describe('the Kubernetes identity of ID token claims', () => {
  const config = { issuer: 'https://idp.example.com', usernameClaim: 'email', groupsClaim: 'groups' };

  it('email as is (no prefix by default), groups as listed', () => {
    expect(kubeIdentityOf({ email: 'alice@example.com', groups: ['team-a', 'ops'] }, config)).toEqual({
      user: 'alice@example.com',
      groups: ['team-a', 'ops'],
    });
  });

  it('another claim is prefixed with the issuer and #, unless a prefix is given or - says none', () => {
    const sub = { ...config, usernameClaim: 'sub' };
    expect(kubeIdentityOf({ sub: '42' }, sub).user).toBe('https://idp.example.com#42');
    expect(kubeIdentityOf({ sub: '42' }, { ...sub, usernamePrefix: 'oidc:' }).user).toBe('oidc:42');
    expect(kubeIdentityOf({ sub: '42' }, { ...sub, usernamePrefix: '-' }).user).toBe('42');
    expect(kubeIdentityOf({ sub: '42', groups: 'one' }, { ...sub, groupsPrefix: 'oidc:' }).groups).toEqual([
      'oidc:one',
    ]);
  });

  it('refuses a missing claim, an unverified email, and any system: name', () => {
    expect(() => kubeIdentityOf({ sub: '42' }, config)).toThrow(/no claim email/);
    expect(() => kubeIdentityOf({ email: 'a@example.com', groups: ['a,system:masters'] }, config)).toThrow(
      /contains a comma/,
    );
    expect(() => kubeIdentityOf({ email: 'a@example.com', email_verified: false }, config)).toThrow(
      OidcIdentityError,
    );
    expect(() => kubeIdentityOf({ email: 'a@example.com', groups: ['system:masters'] }, config)).toThrow(
      /system:masters/,
    );
    expect(
      kubeIdentityOf(
        { email: 'a@example.com', groups: ['system:masters'] },
        { ...config, groupsPrefix: 'idp:' },
      ).groups,
    ).toEqual(['idp:system:masters']);
  });
});
