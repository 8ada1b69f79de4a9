// A GitHub App's installation token: minted with the App's key (@octokit/auth-app) and minted again before it expires.
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import { systemClock, type Clock } from '../clock/clock.ts';
import { ForgeCredentialError, type ForgeCredential, type WatchedFile } from './forge-credential.ts';

/** What minting needs: the App, its installation on the repository's owner, and its private key. */
export interface GitHubAppCredentialOptions {
  /** The API root (https://api.github.com, or https://HOST/api/v3). */
  apiUrl: string;
  appId: string;
  installationId: number;
  /** The App's private key (PEM), given once or a file read again when it changes (a rotated key). */
  privateKey: string | WatchedFile;
  clock?: Clock;
  /** Mint this long before the token expires at most (default 5 minutes; GitHub's tokens last an hour). */
  refreshBeforeMs?: number;
  /** One minting request's bound (default 30 s). */
  requestTimeoutMs?: number;
}

/** A minted token and when GitHub says it expires (epoch ms), and when it was minted. */
export interface MintedToken {
  token: string;
  expiresAtMs: number;
  mintedAtMs: number;
}

const DEFAULT_REFRESH_BEFORE_MS = 5 * 60_000;

/**
 * True when the token must be minted again now: none yet, or it is within its refresh margin of expiring.
 * The margin is `refreshBeforeMs`, or a quarter of the token's life when that is shorter (a short-lived
 * token would otherwise be minted again at every request).
 */
export function mustMint(current: MintedToken | undefined, nowMs: number, refreshBeforeMs: number): boolean {
  if (current === undefined) return true;
  const life = Math.max(0, current.expiresAtMs - current.mintedAtMs);
  return nowMs >= current.expiresAtMs - Math.min(refreshBeforeMs, life / 4);
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * The installation token of a GitHub App, as a {@link ForgeCredential}: minted at the first request
 * (`POST /app/installations/{id}/access_tokens` with a JWT signed by the App's key), kept until its refresh
 * margin, minted again then or after GitHub refused it. Concurrent requests share one minting. The key and
 * the tokens are never in an error message.
 */
export class GitHubAppCredential implements ForgeCredential {
  readonly id: string;
  private current: MintedToken | undefined;
  private minting: Promise<MintedToken> | undefined;
  private auth: { key: string; run: ReturnType<typeof createAppAuth> } | undefined;
  private readonly clock: Clock;
  private readonly request: InstanceType<typeof Octokit>['request'];

  constructor(private readonly options: GitHubAppCredentialOptions) {
    this.id = `github-app:${options.appId}:${options.installationId}`;
    this.clock = options.clock ?? systemClock;
    const timeoutMs = options.requestTimeoutMs ?? 30_000;
    const timedFetch: typeof fetch = (input, init) =>
      fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    this.request = new Octokit({
      baseUrl: options.apiUrl.replace(/\/+$/, ''),
      userAgent: 'rollgate',
      request: { fetch: timedFetch },
      // Octokit's default log writes each failed request to the console; the forge reports failures itself.
      log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    }).request.defaults({ headers: { 'x-github-api-version': '2022-11-28' } });
  }

  async token(): Promise<string> {
    if (!mustMint(this.current, this.clock.now().getTime(), this.refreshBeforeMs)) return this.current!.token;
    return (await this.mint()).token;
  }

  async renewed(refused: string): Promise<string | undefined> {
    // Another request may have minted already since `refused` was handed out.
    if (this.current !== undefined && this.current.token !== refused) return this.current.token;
    const minted = await this.mint();
    return minted.token === refused ? undefined : minted.token;
  }

  private get refreshBeforeMs(): number {
    return this.options.refreshBeforeMs ?? DEFAULT_REFRESH_BEFORE_MS;
  }

  private mint(): Promise<MintedToken> {
    this.minting ??= this.mintOnce().finally(() => (this.minting = undefined));
    return this.minting;
  }

  private async mintOnce(): Promise<MintedToken> {
    const key =
      typeof this.options.privateKey === 'string'
        ? this.options.privateKey
        : await this.options.privateKey.read();
    // A rotated key makes a new signer; auth-app's own token cache is not used (refresh: true), as its
    // fixed 59-minute lifetime does not follow what GitHub said.
    if (this.auth?.key !== key)
      this.auth = {
        key,
        run: createAppAuth({
          appId: this.options.appId,
          privateKey: key,
          installationId: this.options.installationId,
          request: this.request,
        }),
      };
    const mintedAtMs = this.clock.now().getTime();
    try {
      const answer = await this.auth.run({ type: 'installation', refresh: true });
      const expiresAtMs = Date.parse(answer.expiresAt);
      if (typeof answer.token !== 'string' || answer.token === '' || Number.isNaN(expiresAtMs))
        throw new ForgeCredentialError(
          `GitHub App ${this.options.appId}: the access token answer has no token or expiry`,
          'forge.unavailable',
        );
      this.current = { token: answer.token, expiresAtMs, mintedAtMs };
      return this.current;
    } catch (error) {
      if (error instanceof ForgeCredentialError) throw error;
      const status = statusOf(error);
      const where = `GitHub App ${this.options.appId} installation ${this.options.installationId}`;
      // 401: the key or app id is wrong; 403/404: the installation is gone or suspended. A human must act
      // (a key file is read afresh at the next minting, in case it was rotated within one timestamp).
      if (status !== undefined && status >= 400 && status < 500) {
        if (typeof this.options.privateKey !== 'string') this.options.privateKey.forget();
        throw new ForgeCredentialError(
          `${where}: minting an installation token was refused (HTTP ${status})`,
          'forge.unauthorized',
        );
      }
      const reason = status === undefined ? 'no answer' : `HTTP ${status}`;
      throw new ForgeCredentialError(
        `${where}: minting an installation token failed (${reason})`,
        'forge.unavailable',
      );
    }
  }
}
