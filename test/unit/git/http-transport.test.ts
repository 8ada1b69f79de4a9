// The isomorphic-git HTTP transport: which answers it remembers, and when it forgets them.
import { describe, expect, it } from 'vitest';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git/http/node';
import { ManualClock } from '../../../src/clock/clock.ts';
import { CAPABILITIES_TTL_MS, GitHttpTransport } from '../../../src/git/http-transport.ts';

const V2_ADVERT = '000eversion 2\n0013ls-refs=unborn\n0000';
const V1_ADVERT = '001e# service=git-upload-pack\n0000003fabc refs/heads/main\0side-band\n0000';
const REPO = 'http://git.example/apps.git';

class FakeServer implements HttpClient {
  readonly seen: Array<{ method: string; url: string; authorization?: string }> = [];
  advert = V2_ADVERT;
  requireAuth = false;
  failNext: number | Error | undefined;

  request = async (req: GitHttpRequest): Promise<GitHttpResponse> => {
    const authorization = req.headers?.Authorization;
    this.seen.push({
      method: req.method ?? 'GET',
      url: req.url,
      ...(authorization ? { authorization } : {}),
    });
    const fail = this.failNext;
    this.failNext = undefined;
    if (fail instanceof Error) throw fail;
    const status = typeof fail === 'number' ? fail : this.requireAuth && !authorization ? 401 : 200;
    const isGet = (req.method ?? 'GET') === 'GET';
    const body = status === 200 ? (isGet ? this.advert : 'refs') : 'no';
    async function* chunks(): AsyncIterableIterator<Uint8Array> {
      yield new TextEncoder().encode(body);
    }
    return {
      url: req.url,
      statusCode: status,
      statusMessage: String(status),
      headers: {
        'content-type':
          status === 200 && isGet ? 'application/x-git-upload-pack-advertisement' : 'text/plain',
      },
      body: chunks(),
    };
  };
}

async function text(response: GitHttpResponse): Promise<string> {
  let out = '';
  for await (const chunk of response.body ?? []) out += new TextDecoder().decode(chunk);
  return out;
}

const discover = (
  transport: GitHttpTransport,
  headers: Record<string, string> = {},
): Promise<GitHttpResponse> =>
  transport.request({
    method: 'GET',
    url: `${REPO}/info/refs?service=git-upload-pack`,
    headers: { 'Git-Protocol': 'version=2', ...headers },
  });
const lsRefs = (transport: GitHttpTransport): Promise<GitHttpResponse> =>
  transport.request({ method: 'POST', url: `${REPO}/git-upload-pack`, headers: {} });

describe('GitHttpTransport', () => {
  it('answers a repeated protocol v2 capability request from memory, with the same body', async () => {
    const server = new FakeServer();
    const transport = new GitHttpTransport(new ManualClock(), server);
    expect(await text(await discover(transport))).toBe(V2_ADVERT);
    expect(await text(await discover(transport))).toBe(V2_ADVERT);
    await lsRefs(transport);
    expect(server.seen.map((r) => r.method)).toEqual(['GET', 'POST']);
    expect(transport.requestCount).toBe(2);
  });

  it('never remembers a v1 advertisement, which lists refs', async () => {
    const server = new FakeServer();
    server.advert = V1_ADVERT;
    const transport = new GitHttpTransport(new ManualClock(), server);
    expect(await text(await discover(transport))).toBe(V1_ADVERT);
    await discover(transport);
    expect(server.seen).toHaveLength(2);
  });

  it('forgets after a failed request or a server error, and after the TTL', async () => {
    const server = new FakeServer();
    const clock = new ManualClock();
    const transport = new GitHttpTransport(clock, server);
    await discover(transport);
    server.failNext = 500;
    await lsRefs(transport);
    await discover(transport);
    expect(server.seen.map((r) => r.method)).toEqual(['GET', 'POST', 'GET']);

    server.failNext = new Error('ECONNREFUSED');
    await expect(lsRefs(transport)).rejects.toThrow('ECONNREFUSED');
    await discover(transport);
    expect(server.seen).toHaveLength(5);

    await discover(transport);
    expect(server.seen).toHaveLength(5);
    clock.advance(CAPABILITIES_TTL_MS);
    await discover(transport);
    expect(server.seen).toHaveLength(6);
  });

  it('remembers the challenge to a request without credentials, never a refusal of credentials', async () => {
    const server = new FakeServer();
    server.requireAuth = true;
    const transport = new GitHttpTransport(new ManualClock(), server);
    expect((await discover(transport)).statusCode).toBe(401);
    expect((await discover(transport)).statusCode).toBe(401);
    expect(server.seen).toHaveLength(1);

    server.failNext = 401;
    expect((await discover(transport, { Authorization: 'Basic bad' })).statusCode).toBe(401);
    expect((await discover(transport, { Authorization: 'Basic bad' })).statusCode).toBe(200);
    expect((await discover(transport, { Authorization: 'Basic bad' })).statusCode).toBe(200);
    expect(server.seen).toHaveLength(3);
  });

  it('keeps answers for different credentials apart', async () => {
    const server = new FakeServer();
    const transport = new GitHttpTransport(new ManualClock(), server);
    await discover(transport, { Authorization: 'Basic one' });
    await discover(transport, { Authorization: 'Basic two' });
    await discover(transport, { Authorization: 'Basic one' });
    expect(server.seen.map((r) => r.authorization)).toEqual(['Basic one', 'Basic two']);
  });
});
