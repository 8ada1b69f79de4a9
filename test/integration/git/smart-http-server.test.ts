// The smart-HTTP bridge with the real git CLI as the client: clone, push, protocol v2, gzip, auth, outage.
import { request } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { serveGitRepositories } from '../../../src/git/smart-http-server.ts';
import type { GitServer, GitServerOptions } from '../../../src/git/smart-http-server.ts';
import {
  configMapYaml,
  createBareRepository,
  git,
  gitAsync,
  makeTempDir,
  WorkingCopy,
} from '../../support/git-fixtures.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function served(options: Partial<GitServerOptions> = {}): Promise<{
  tmp: string;
  bare: string;
  wc: WorkingCopy;
  server: GitServer;
  head: string;
}> {
  const tmp = makeTempDir();
  cleanups.push(() => tmp.remove());
  const root = join(tmp.path, 'repos');
  const bare = createBareRepository(root, 'apps');
  const wc = new WorkingCopy(join(tmp.path, 'work'));
  wc.write({ 'envs/prod/app.yaml': configMapYaml('app', { v: '1' }) });
  const head = wc.commit();
  await wc.push(bare);
  const server = await serveGitRepositories({ root, ...options });
  cleanups.push(() => server.stop());
  return { tmp: tmp.path, bare, wc, server, head };
}

function post(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('latin1') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

function pkt(line: string): string {
  return `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
}

describe('serveGitRepositories', () => {
  it('serves clones to the real git CLI over protocol v2', async () => {
    const s = await served();
    const target = join(s.tmp, 'clone');
    await gitAsync(s.tmp, [
      '-c',
      'protocol.version=2',
      'clone',
      '--quiet',
      `${s.server.url}/apps.git`,
      target,
    ]);
    expect(git(target, ['rev-parse', 'HEAD'])).toBe(s.head);
    const refs = await gitAsync(s.tmp, [
      '-c',
      'protocol.version=2',
      'ls-remote',
      `${s.server.url}/apps.git`,
      'refs/heads/main',
    ]);
    expect(refs).toBe(`${s.head}\trefs/heads/main`);
  });

  it('accepts git push when receivePack is on, and refuses it when off', async () => {
    const open = await served({ receivePack: true });
    open.wc.write({ 'envs/prod/app.yaml': configMapYaml('app', { v: '2' }) });
    const pushed = open.wc.commit();
    await open.wc.push(`${open.server.url}/apps.git`);
    expect(git(open.bare, ['rev-parse', 'refs/heads/main'])).toBe(pushed);

    const closed = await served();
    closed.wc.write({ 'envs/prod/app.yaml': configMapYaml('app', { v: '2' }) });
    closed.wc.commit();
    await expect(closed.wc.push(`${closed.server.url}/apps.git`)).rejects.toThrow(/403|denied|not enabled/i);
    expect(git(closed.bare, ['rev-parse', 'refs/heads/main'])).toBe(closed.head);
  });

  it('decodes gzip request bodies (protocol v2 ls-refs)', async () => {
    const s = await served();
    const body = gzipSync(
      Buffer.from(`${pkt('command=ls-refs\n')}0001${pkt('ref-prefix refs/heads/\n')}0000`),
    );
    const res = await post(`${s.server.url}/apps.git/git-upload-pack`, body, {
      'content-type': 'application/x-git-upload-pack-request',
      'content-encoding': 'gzip',
      'git-protocol': 'version=2',
    });
    expect(res.status).toBe(200);
    expect(res.body).toContain(`${s.head} refs/heads/main`);
  });

  it('requires basic credentials when configured', async () => {
    const s = await served({ basicAuth: { username: 'robot', password: 'pa55' }, receivePack: true });
    const base = s.server.url.replace('http://', '');
    await expect(gitAsync(s.tmp, ['ls-remote', `http://robot:wrong@${base}/apps.git`])).rejects.toThrow(
      /401|Authentication failed/i,
    );
    expect(
      await gitAsync(s.tmp, ['ls-remote', `http://robot:pa55@${base}/apps.git`, 'refs/heads/main']),
    ).toContain(s.head);
    s.wc.write({ 'envs/prod/app.yaml': configMapYaml('app', { v: '3' }) });
    const pushed = s.wc.commit();
    await s.wc.push(`http://robot:pa55@${base}/apps.git`);
    expect(git(s.bare, ['rev-parse', 'refs/heads/main'])).toBe(pushed);
  });

  it('answers 503 while down, counts requests, and serves again when back', async () => {
    const s = await served();
    s.server.setDown(true);
    await expect(gitAsync(s.tmp, ['ls-remote', `${s.server.url}/apps.git`])).rejects.toThrow(/503/);
    expect(s.server.requestCount()).toBeGreaterThanOrEqual(1);
    s.server.setDown(false);
    s.server.resetRequestCount();
    expect(await gitAsync(s.tmp, ['ls-remote', `${s.server.url}/apps.git`, 'refs/heads/main'])).toContain(
      s.head,
    );
    expect(s.server.requestCount()).toBeGreaterThanOrEqual(1);
  });

  it('answers 404 for a repository that does not exist', async () => {
    const s = await served();
    await expect(gitAsync(s.tmp, ['ls-remote', `${s.server.url}/missing.git`])).rejects.toThrow(
      /not found|404/i,
    );
  });
});
