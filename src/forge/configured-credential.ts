// The credential a forge setting names (token, tokenEnv, tokenFile or githubApp), checked once at start.
import { readFileSync } from 'node:fs';
import type { Clock } from '../clock/clock.ts';
import { fileCredential, fixedCredential, WatchedFile, type ForgeCredential } from './forge-credential.ts';
import { GitHubAppCredential } from './github-app-credential.ts';

/** A GitHub App as a forge setting names it: ids inline or in files, the key in a file or a variable. */
export interface GitHubAppSetting {
  appId?: string | number | undefined;
  appIdFile?: string | undefined;
  installationId?: number | undefined;
  installationIdFile?: string | undefined;
  privateKeyFile?: string | undefined;
  privateKeyEnv?: string | undefined;
}

/** The credential fields of a forge setting (`promotions[].pullRequest`, `sources[].commitStatus`). */
export interface CredentialSetting {
  provider: string;
  apiUrl: string;
  token?: string | undefined;
  tokenEnv?: string | undefined;
  tokenFile?: string | undefined;
  githubApp?: GitHubAppSetting | undefined;
}

/** A credential setting that cannot be used: names the key, never a value. */
export class CredentialSettingError extends Error {
  override readonly name = 'CredentialSettingError';
  readonly code = 'config.secret-unavailable';
  constructor(
    readonly what: string,
    reason: string,
  ) {
    super(`secret for ${what} is not available: ${reason}`);
  }
}

function fileText(what: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new CredentialSettingError(
      what,
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  if (text === '') throw new CredentialSettingError(what, `file ${path} is empty`);
  return text;
}

function positiveInteger(what: string, text: string): number {
  if (!/^[1-9]\d*$/.test(text)) throw new CredentialSettingError(what, 'must be a positive integer');
  return Number(text);
}

/**
 * Builds the credential a setting names. Everything is read once now, so a missing variable or file fails
 * the start naming `what`; a `tokenFile` and an App's `privateKeyFile` are then read again whenever the
 * file changes (a rotated Secret), and an App's installation token is minted and minted again before it
 * expires.
 */
export function configuredCredential(
  what: string,
  setting: CredentialSetting,
  env: Record<string, string | undefined>,
  options: { clock?: Clock } = {},
): ForgeCredential {
  if (setting.token !== undefined) return fixedCredential(setting.token);
  if (setting.tokenEnv !== undefined) {
    const value = env[setting.tokenEnv];
    if (value === undefined || value === '')
      throw new CredentialSettingError(what, `environment variable ${setting.tokenEnv} is not set`);
    return fixedCredential(value);
  }
  if (setting.tokenFile !== undefined) {
    fileText(`${what} tokenFile`, setting.tokenFile);
    return fileCredential(setting.tokenFile, `${what} tokenFile`);
  }
  const app = setting.githubApp;
  if (app === undefined) throw new CredentialSettingError(what, 'no token, tokenEnv, tokenFile or githubApp');
  const appId =
    app.appId !== undefined
      ? String(app.appId)
      : app.appIdFile !== undefined
        ? fileText(`${what} githubApp.appIdFile`, app.appIdFile)
        : undefined;
  if (appId === undefined) throw new CredentialSettingError(`${what} githubApp`, 'give appId or appIdFile');
  const installationId =
    app.installationId ??
    (app.installationIdFile !== undefined
      ? positiveInteger(
          `${what} githubApp.installationIdFile`,
          fileText(`${what} githubApp.installationIdFile`, app.installationIdFile),
        )
      : undefined);
  if (installationId === undefined)
    throw new CredentialSettingError(`${what} githubApp`, 'give installationId or installationIdFile');
  let privateKey: string | WatchedFile;
  if (app.privateKeyFile !== undefined) {
    fileText(`${what} githubApp.privateKeyFile`, app.privateKeyFile);
    privateKey = new WatchedFile(app.privateKeyFile, `${what} githubApp.privateKeyFile`);
  } else if (app.privateKeyEnv !== undefined) {
    const value = env[app.privateKeyEnv];
    if (value === undefined || value === '')
      throw new CredentialSettingError(
        `${what} githubApp`,
        `environment variable ${app.privateKeyEnv} is not set`,
      );
    // A key put in a variable with literal \n (as some tools write PEMs on one line) is read as lines.
    privateKey = value.includes('\\n') ? value.replaceAll('\\n', '\n') : value;
  } else throw new CredentialSettingError(`${what} githubApp`, 'give privateKeyFile or privateKeyEnv');
  return new GitHubAppCredential({
    apiUrl: setting.apiUrl,
    appId,
    installationId,
    privateKey,
    ...(options.clock !== undefined && { clock: options.clock }),
  });
}
