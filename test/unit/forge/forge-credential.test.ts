import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configuredCredential } from '../../../src/forge/configured-credential.ts';
import {
  ForgeCredentialError,
  fileCredential,
  fixedCredential,
  withCredential,
} from '../../../src/forge/forge-credential.ts';
import { mustMint } from '../../../src/forge/github-app-credential.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-credential-'));
  dirs.push(dir);
  const file = join(dir, 'token');
  writeFileSync(file, text);
  return file;
}

describe('mustMint', () => {
  const hour = { token: 't', mintedAtMs: 0, expiresAtMs: 3_600_000 };
  const minute = { token: 't', mintedAtMs: 0, expiresAtMs: 60_000 };
  it.each([
    { name: 'no token yet', current: undefined, now: 0, want: true },
    { name: 'an hour token, fresh', current: hour, now: 1_000, want: false },
    { name: 'an hour token, 6 minutes left', current: hour, now: 3_240_000, want: false },
    { name: 'an hour token, 5 minutes left (the margin)', current: hour, now: 3_300_000, want: true },
    { name: 'a minute token, 20 s left', current: minute, now: 40_000, want: false },
    { name: 'a minute token, 15 s left (a quarter of its life)', current: minute, now: 45_000, want: true },
    { name: 'expired', current: minute, now: 70_000, want: true },
  ])('$name', ({ current, now, want }) => {
    expect(mustMint(current, now, 300_000)).toBe(want);
  });
});

describe('forge credentials', () => {
  it('a token file is read again once it changed, and after a refusal', async () => {
    const file = tempFile('one-0123456789abcdef\n');
    const credential = fileCredential(file, 'sources.prod.commitStatus tokenFile');
    expect(await credential.token()).toBe('one-0123456789abcdef');
    writeFileSync(`${file}.new`, 'two-0123456789abcdef\n');
    renameSync(`${file}.new`, file);
    expect(await credential.token()).toBe('two-0123456789abcdef');
    // Refused, and the file holds the same token: nothing else to try.
    expect(await credential.renewed('two-0123456789abcdef')).toBeUndefined();
    expect(credential.id).toBe(`file:${file}`);
  });

  it('a token file that went away is a ForgeCredentialError naming the setting, not the token', async () => {
    const file = tempFile('secret-token-0123456789\n');
    const credential = fileCredential(file, 'promotions.p.pullRequest tokenFile');
    await credential.token();
    rmSync(file);
    const error = await credential.token().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ForgeCredentialError);
    expect((error as ForgeCredentialError).forgeCode).toBe('forge.unauthorized');
    expect((error as Error).message).toMatch(/promotions\.p\.pullRequest tokenFile: cannot read .*: ENOENT/);
    expect((error as Error).message).not.toContain('secret-token');
  });

  it('withCredential retries once with a renewed token after a 401, never for other errors', async () => {
    const sent: string[] = [];
    const renewing = { ...fixedCredential('old'), renewed: () => Promise.resolve('new') };
    const unauthorized = (error: unknown) => (error as { status?: number }).status === 401;
    const attempt = (status: number) => async (token: string) => {
      sent.push(token);
      if (token === 'old') throw Object.assign(new Error('refused'), { status });
      return 'ok';
    };
    expect(await withCredential(renewing, attempt(401), unauthorized)).toBe('ok');
    expect(sent).toEqual(['old', 'new']);
    sent.length = 0;
    await expect(withCredential(renewing, attempt(404), unauthorized)).rejects.toThrow('refused');
    expect(sent).toEqual(['old']);
    // A fixed token has nothing to renew: the 401 stands.
    await expect(withCredential(fixedCredential('old'), attempt(401), unauthorized)).rejects.toThrow(
      'refused',
    );
  });

  it('names the setting when a credential cannot be built at start', () => {
    const setting = { provider: 'github', apiUrl: 'https://api.github.com' };
    expect(() =>
      configuredCredential('promotions.p.pullRequest', { ...setting, tokenEnv: 'NOPE' }, {}),
    ).toThrow(/promotions\.p\.pullRequest is not available: environment variable NOPE is not set/);
    expect(() =>
      configuredCredential(
        'promotions.p.pullRequest',
        { ...setting, githubApp: { appId: 1, installationId: 2, privateKeyFile: '/nonexistent/key.pem' } },
        {},
      ),
    ).toThrow(
      /promotions\.p\.pullRequest githubApp\.privateKeyFile is not available: cannot read \/nonexistent\/key\.pem: ENOENT/,
    );
    const idFile = tempFile('not-a-number\n');
    expect(() =>
      configuredCredential(
        'sources.prod.commitStatus',
        { ...setting, githubApp: { appId: 1, installationIdFile: idFile, privateKeyEnv: 'KEY' } },
        { KEY: 'pem' },
      ),
    ).toThrow(/githubApp\.installationIdFile is not available: must be a positive integer/);
    expect(
      configuredCredential(
        'sources.prod.commitStatus',
        { ...setting, githubApp: { appId: 1, installationId: 2, privateKeyEnv: 'KEY' } },
        { KEY: 'pem' },
      ).id,
    ).toBe('github-app:1:2');
  });
});
