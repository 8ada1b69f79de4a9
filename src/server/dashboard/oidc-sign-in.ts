// Sign-in to the dashboard with OpenID Connect: the authorization code flow with PKCE, and the session cookie.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as oidc from 'openid-client';
import type { Clock } from '../../clock/clock.ts';
import type { DashboardOidcConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/logger.ts';
import {
  cookieOf,
  MAX_COOKIE_BYTES,
  openSession,
  openSignInState,
  sealCookie,
  SESSION_COOKIE,
  setCookie,
  SIGN_IN_COOKIE,
  type DashboardSession,
  type SignInState,
} from './dashboard-session.ts';
import { kubeIdentityOf, OidcIdentityError } from './oidc-identity.ts';

/** The sign-in routes, under the page's path so the Host check and the page's CSP cover them. */
export const SIGN_IN_PATH = '/ui/auth/login';
export const CALLBACK_PATH = '/ui/auth/callback';
export const SIGN_OUT_PATH = '/ui/auth/logout';

/** A sign-in must come back from the IdP within this (the state cookie's life). */
const SIGN_IN_SECONDS = 600;

/** What sign-in needs, the secrets already resolved (never logged, never in a page). */
export interface OidcSettings {
  config: DashboardOidcConfig;
  clientSecret: string;
  sessionKey: string;
}

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small page of its own: a sign-in outcome, with where to go next. */
function page(title: string, text: string, extraHead = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Rollgate</title>${extraHead}
<link rel="stylesheet" href="/ui/app.css"></head>
<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p><p><a href="/ui/">Back to the dashboard</a> · <a href="${SIGN_IN_PATH}">Sign in again</a></p></main></body></html>
`;
}

export class OidcSignIn {
  private discovered: Promise<oidc.Configuration> | undefined;
  private readonly secure: boolean;
  private readonly logger: Logger;

  constructor(
    private readonly settings: OidcSettings,
    private readonly clock: Clock,
    logger: Logger,
  ) {
    // Served over https exactly when the IdP sends users back over https.
    this.secure = new URL(settings.config.redirectUrl).protocol === 'https:';
    this.logger = logger.child({ component: 'dashboard-oidc' });
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }

  /** The IdP's metadata, read once; a failure is forgotten so the next sign-in tries again. */
  private configuration(): Promise<oidc.Configuration> {
    const { config, clientSecret } = this.settings;
    this.discovered ??= oidc
      .discovery(new URL(config.issuer), config.clientId, undefined, oidc.ClientSecretPost(clientSecret), {
        // The schema allows plain http for a loopback issuer only.
        ...(new URL(config.issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
        timeout: 10,
      })
      .catch((err: unknown) => {
        this.discovered = undefined;
        throw err;
      });
    return this.discovered;
  }

  /** The request's session, when its cookie is ours, intact and unexpired. */
  sessionOf(req: IncomingMessage): DashboardSession | undefined {
    const sealed = cookieOf(req.headers.cookie, SESSION_COOKIE);
    return sealed === undefined
      ? undefined
      : openSession(this.settings.sessionKey, sealed, this.nowSeconds());
  }

  /** GET /ui/auth/login: sends the browser to the IdP, remembering state, nonce and PKCE verifier. */
  async signIn(res: ServerResponse): Promise<void> {
    let configuration: oidc.Configuration;
    try {
      configuration = await this.configuration();
    } catch (err) {
      this.logger.warn({ err: errorSummary(err) }, 'OIDC discovery failed');
      res.writeHead(502, PAGE_HEADERS);
      res.end(page('Sign-in unavailable', 'The identity provider could not be reached; try again later.'));
      return;
    }
    const state: SignInState = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      expires: this.nowSeconds() + SIGN_IN_SECONDS,
    };
    const { config } = this.settings;
    const target = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: config.redirectUrl,
      scope: config.scopes.join(' '),
      state: state.state,
      nonce: state.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(state.verifier),
      code_challenge_method: 'S256',
    });
    res.writeHead(302, {
      location: target.href,
      'cache-control': 'no-store',
      // Lax: the IdP's redirect back is a cross-site top-level GET, which a Strict cookie would miss.
      'set-cookie': setCookie(SIGN_IN_COOKIE, sealCookie(this.settings.sessionKey, SIGN_IN_COOKIE, state), {
        maxAge: SIGN_IN_SECONDS,
        sameSite: 'Lax',
        secure: this.secure,
        path: '/ui/auth/',
      }),
    });
    res.end();
  }

  /**
   * GET /ui/auth/callback: the code exchanged (state, nonce, PKCE checked by openid-client), the ID token's
   * claims turned into a user and groups, and the session cookie set. The browser then lands on the page
   * by a navigation from this (same-origin) page, not by a redirect: a redirect would still count as part
   * of the IdP's cross-site navigation, and the Strict session cookie would not be sent with it.
   */
  async callback(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { config, sessionKey } = this.settings;
    const clearState = setCookie(SIGN_IN_COOKIE, '', {
      maxAge: 0,
      sameSite: 'Lax',
      secure: this.secure,
      path: '/ui/auth/',
    });
    const refuse = (status: number, title: string, text: string): void => {
      res.writeHead(status, { ...PAGE_HEADERS, 'set-cookie': clearState });
      res.end(page(title, text));
    };
    const sealed = cookieOf(req.headers.cookie, SIGN_IN_COOKIE);
    const state = sealed === undefined ? undefined : openSignInState(sessionKey, sealed, this.nowSeconds());
    if (state === undefined)
      return refuse(400, 'Sign-in expired', 'This sign-in was not started here or took too long.');
    const current = new URL(config.redirectUrl);
    current.search = new URL(req.url ?? '/', 'http://dashboard').search;
    let session: DashboardSession;
    try {
      const tokens = await oidc.authorizationCodeGrant(await this.configuration(), current, {
        pkceCodeVerifier: state.verifier,
        expectedState: state.state,
        expectedNonce: state.nonce,
        idTokenExpected: true,
      });
      const identity = kubeIdentityOf(tokens.claims() ?? {}, config);
      session = {
        ...identity,
        expires: this.nowSeconds() + config.sessionSeconds,
        csrf: randomBytes(32).toString('base64url'),
      };
    } catch (err) {
      if (err instanceof OidcIdentityError) {
        this.logger.warn({ err: errorSummary(err) }, 'dashboard sign-in refused');
        return refuse(403, 'Sign-in refused', err.message);
      }
      this.logger.warn({ err: errorSummary(err) }, 'dashboard sign-in failed');
      return refuse(400, 'Sign-in failed', 'The identity provider did not complete the sign-in.');
    }
    const cookie = sealCookie(sessionKey, SESSION_COOKIE, session);
    if (cookie.length > MAX_COOKIE_BYTES)
      return refuse(403, 'Sign-in refused', 'Too many groups to keep in a session cookie.');
    this.logger.info({ user: session.user, groups: session.groups.length }, 'dashboard sign-in');
    res.writeHead(200, {
      ...PAGE_HEADERS,
      'set-cookie': [
        clearState,
        setCookie(SESSION_COOKIE, cookie, {
          maxAge: config.sessionSeconds,
          sameSite: 'Strict',
          secure: this.secure,
          path: '/',
        }),
      ],
    });
    res.end(
      page('Signed in', `Signed in as ${session.user}.`, '<meta http-equiv="refresh" content="0;url=/ui/">'),
    );
  }

  /** The Set-Cookie line that ends a session (sign-out). */
  endSession(): string {
    return setCookie(SESSION_COOKIE, '', { maxAge: 0, sameSite: 'Strict', secure: this.secure, path: '/' });
  }
}

/**
 * What is logged of a failed sign-in: the error's name, code and message. Never the error itself: some
 * carry the token response or the request they were made from.
 */
function errorSummary(err: unknown): { name: string; code?: string; message: string } {
  if (!(err instanceof Error)) return { name: 'unknown', message: String(err).slice(0, 200) };
  const code = (err as { code?: unknown }).code;
  return {
    name: err.name,
    ...(typeof code === 'string' ? { code } : {}),
    message: err.message.slice(0, 200),
  };
}
