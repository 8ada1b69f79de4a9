// Forge credentials against the forge double: a GitHub App's installation tokens (JWT checked, 60 s tokens on the
// double's clock) minted before they expire and again after a refusal, and token files re-read when rotated.
import { generateKeyPairSync } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { configuredCredential } from '../../../src/forge/configured-credential.ts';
import { createForge } from '../../../src/forge/create-forge.ts';
import { GitHubForge } from '../../../src/forge/github-forge.ts';
import { ForgeError } from '../../../src/forge/forge-error.ts';
import type { ForgeProvider } from '../../../src/forge/forge.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { GiteaApi } from '../../support/forge-double/gitea-api.ts';
import { GitLabApi } from '../../support/forge-double/gitlab-api.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { makeTempDir, type TempDir } from '../../support/git-fixtures.ts';

const REPO = 'acme/deploy';
const APP_ID = '4242';
const INSTALLATION = 77;

const keys = () =>
  generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });

let double: ForgeDouble | undefined;
let tmp: TempDir | undefined;

afterEach(async () => {
  await double?.stop();
  tmp?.remove();
  double = undefined;
  tmp = undefined;
});

async function appScene(clock: ManualClock) {
  const { publicKey, privateKey } = keys();
  const started = (double = await startForgeDouble({ clock }));
  await started.createRepository(REPO, { files: { 'envs/prod/web.yaml': 'image: web:1\n' } });
  started.addApp({ appId: APP_ID, publicKeyPem: publicKey, installationId: INSTALLATION, account: 'acme' });
  const dir = (tmp = makeTempDir('rollgate-app-key-'));
  const keyFile = join(dir.path, 'private-key.pem');
  writeFileSync(keyFile, privateKey);
  const sha = (await started.branchSha(REPO, 'main')) ?? '';
  return { double: started, keyFile, privateKey, sha };
}

const appSetting = (double: ForgeDouble, keyFile: string) => ({
  provider: 'github',
  apiUrl: double.githubApiUrl,
  githubApp: { appId: Number(APP_ID), installationId: INSTALLATION, privateKeyFile: keyFile },
});

const githubForge = (double: ForgeDouble, token: ReturnType<typeof configuredCredential>) =>
  createForge({
    provider: 'github',
    apiUrl: double.githubApiUrl,
    repository: REPO,
    token,
    sleep: async () => undefined,
  });

const refused = (double: ForgeDouble) => double.requests.filter((r) => r.status === 401);

describe('GitHub App authentication', () => {
  it('mints an installation token with the App JWT, mints the next one before it expires, and after one expired unseen', async () => {
    const clock = new ManualClock(Date.now());
    const scene = await appScene(clock);
    const credential = configuredCredential(
      'promotions.p.pullRequest',
      appSetting(scene.double, scene.keyFile),
      {},
      { clock },
    );
    const forge = githubForge(scene.double, credential);

    await forge.setCommitStatus({
      sha: scene.sha,
      state: 'pending',
      context: 'rollgate/prod',
      description: 'one',
    });
    expect(scene.double.mintedTokens).toHaveLength(1);
    expect(scene.double.repository(REPO).statuses.at(-1)).toMatchObject({ state: 'pending' });

    // 50 s later the 60 s token is within its refresh margin: a new one is minted before any request is refused.
    clock.advance(50_000);
    await forge.setCommitStatus({
      sha: scene.sha,
      state: 'success',
      context: 'rollgate/prod',
      description: 'two',
    });
    expect(scene.double.mintedTokens).toHaveLength(2);
    expect(refused(scene.double)).toEqual([]);

    // The double's tokens expire while Rollgate's clock does not know (skew, a revoked token): one 401, a new
    // token minted, the request sent again; the caller sees no forge.unauthorized.
    scene.double.tokenExpiries.set(scene.double.mintedTokens[1]!.token, clock.now().getTime());
    await forge.setCommitStatus({
      sha: scene.sha,
      state: 'failure',
      context: 'rollgate/prod',
      description: 'three',
    });
    expect(scene.double.mintedTokens).toHaveLength(3);
    expect(refused(scene.double)).toHaveLength(1);
    expect(scene.double.repository(REPO).statuses.map((s) => s.state)).toEqual([
      'pending',
      'success',
      'failure',
    ]);
    expect(scene.double.violations()).toEqual([]);
  });

  it('a key GitHub does not know is forge.unauthorized, and neither the key nor a token is in the error or the log', async () => {
    const clock = new ManualClock(Date.now());
    const scene = await appScene(clock);
    writeFileSync(scene.keyFile, keys().privateKey);
    const chunks: string[] = [];
    const stream = new PassThrough();
    stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
    const credential = configuredCredential(
      'promotions.p.pullRequest',
      appSetting(scene.double, scene.keyFile),
      {},
      { clock },
    );
    const forge = new GitHubForge({
      provider: 'github',
      apiUrl: scene.double.githubApiUrl,
      repository: REPO,
      token: credential,
      sleep: async () => undefined,
      logger: createLogger({ format: 'json', destination: stream, level: 'debug' }),
    });
    const error = await forge.getPullRequest(1).then(
      () => new Error('no error'),
      (caught: unknown) => caught as Error,
    );
    expect(error).toBeInstanceOf(ForgeError);
    expect((error as ForgeError).code).toBe('forge.unauthorized');
    expect(error.message).toMatch(
      /GitHub App 4242 installation 77: minting an installation token was refused \(HTTP 401\)/,
    );
    const said = `${error.message} ${JSON.stringify(error)} ${String((error as Error).stack)} ${chunks.join('')}`;
    expect(said).not.toContain('PRIVATE KEY');
    expect(said).not.toMatch(/ghs_/);
    expect(scene.double.mintedTokens).toHaveLength(0);

    // The key rotated in the file (a new Secret): the next request signs with it, no restart.
    writeFileSync(scene.keyFile, scene.privateKey);
    await forge.setCommitStatus({
      sha: scene.sha,
      state: 'success',
      context: 'rollgate/prod',
      description: 'ok',
    });
    expect(scene.double.mintedTokens).toHaveLength(1);
  });

  it('refuses a JWT the App did not sign, and an installation token in its place', async () => {
    const scene = await appScene(new ManualClock(Date.now()));
    const post = (authorization: string) =>
      fetch(`${scene.double.githubApiUrl}/app/installations/${INSTALLATION}/access_tokens`, {
        method: 'POST',
        headers: { authorization, 'user-agent': 'test', accept: 'application/vnd.github+json' },
      });
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const claims = Buffer.from(JSON.stringify({ iss: APP_ID, iat: 0, exp: 4102444800 })).toString(
      'base64url',
    );
    expect((await post(`Bearer ${header}.${claims}.`)).status).toBe(401);
    expect((await post(`Bearer ${scene.double.token}`)).status).toBe(401);
    expect(scene.double.mintedTokens).toHaveLength(0);
  });
});

describe('token files are re-read when the Secret rotates', () => {
  it.each<ForgeProvider>(['github', 'gitlab', 'gitea'])('%s', async (provider) => {
    const started = (double = await startForgeDouble());
    await started.createRepository(REPO, { files: { 'README.md': 'x\n' } });
    let apiUrl = started.githubApiUrl;
    if (provider !== 'github') {
      const api = provider === 'gitlab' ? new GitLabApi(started) : new GiteaApi(started);
      const prefix = provider === 'gitlab' ? '/api/v4' : '/api/v1';
      started.mount(prefix, api.handle);
      apiUrl = `${started.url}${prefix}`;
    }
    const dir = (tmp = makeTempDir('rollgate-token-file-'));
    const file = join(dir.path, 'token');
    const first = 'rotated-token-one-0123456789abcdef';
    const second = 'rotated-token-two-0123456789abcdef';
    started.addToken(first, { user: started.bot });
    writeFileSync(file, `${first}\n`);
    const forge = createForge({
      provider,
      apiUrl,
      repository: REPO,
      token: configuredCredential('sources.prod.commitStatus', { provider, apiUrl, tokenFile: file }, {}),
      sleep: async () => undefined,
    });
    const sha = (await started.branchSha(REPO, 'main')) ?? '';
    await forge.setCommitStatus({ sha, state: 'pending', context: 'rollgate/prod', description: 'one' });

    // The Secret is rotated: the old token is revoked, the file holds the new one.
    started.tokens.delete(first);
    started.addToken(second, { user: started.bot });
    // As the kubelet updates a mounted Secret: a new file swapped in.
    writeFileSync(`${file}.new`, `${second}\n`);
    renameSync(`${file}.new`, file);
    await forge.setCommitStatus({ sha, state: 'success', context: 'rollgate/prod', description: 'two' });
    expect(started.requests.filter((r) => r.status === 401)).toEqual([]);
    expect(started.violations()).toEqual([]);
  });
});
