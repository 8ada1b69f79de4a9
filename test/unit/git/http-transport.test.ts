// The isomorphic-git HTTP transport: which answers it remembers, and when it forgets them.
import { describe, expect, it } from 'vitest';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git/http/node';
import { ManualClock } from '../../../src/clock/clock.ts';
import { CAPABILITIES_TTL_MS, GitHttpTransport, knownTipAdvert } from '../../../src/git/http-transport.ts';

const V2_ADVERT = '000eversion 2\n0013ls-refs=unborn\n0000';
const V1_ADVERT = '001e# service=git-upload-pack\n00000022abc refs/heads/main\0side-band\n0000';
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
const fetchAdvert = (client: HttpClient, headers: Record<string, string> = {}): Promise<GitHttpResponse> =>
  client.request({ method: 'GET', url: `${REPO}/info/refs?service=git-upload-pack`, headers });
const TIP = 'd'.repeat(40);
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

  it('answers the v1 advertisement of a fetch whose tip a ref check returned, listing only that branch', async () => {
    const server = new FakeServer();
    server.advert = V1_ADVERT;
    const transport = new GitHttpTransport(new ManualClock(), server);
    expect(await text(await fetchAdvert(transport))).toBe(V1_ADVERT);

    const known = transport.withKnownTip('refs/heads/main', TIP);
    const answer = await fetchAdvert(known);
    expect(answer.headers?.['content-type']).toBe('application/x-git-upload-pack-advertisement');
    expect(await text(answer)).toBe(
      new TextDecoder().decode(knownTipAdvert('refs/heads/main', TIP, 'side-band\n')),
    );
    await known.request({ method: 'POST', url: `${REPO}/git-upload-pack`, headers: {} });
    expect(server.seen.map((r) => r.method)).toEqual(['GET', 'POST']);
    expect(transport.requestCount).toBe(2);
  });

  it('asks the server for a known-tip advertisement until it has one for those credentials, and after a failure', async () => {
    const server = new FakeServer();
    server.advert = V1_ADVERT;
    const transport = new GitHttpTransport(new ManualClock(), server);
    const known = transport.withKnownTip('refs/heads/main', TIP);
    expect(await text(await fetchAdvert(known))).toBe(V1_ADVERT);
    await fetchAdvert(known, { Authorization: 'Basic other' });
    await fetchAdvert(known);
    expect(server.seen).toHaveLength(2);

    server.failNext = 503;
    await lsRefs(transport);
    expect(await text(await fetchAdvert(known))).toBe(V1_ADVERT);
    expect(server.seen).toHaveLength(4);
  });

  it('replays the remembered challenge to a known-tip fetch without credentials, then answers it from memory', async () => {
    const server = new FakeServer();
    server.requireAuth = true;
    const transport = new GitHttpTransport(new ManualClock(), server);
    // A ref check met the challenge; a fetch with credentials saw the repository's v1 advertisement.
    expect((await discover(transport)).statusCode).toBe(401);
    server.advert = V1_ADVERT;
    await fetchAdvert(transport, { Authorization: 'Basic good' });
    expect(server.seen).toHaveLength(2);

    const known = transport.withKnownTip('refs/heads/main', TIP);
    expect((await fetchAdvert(known)).statusCode).toBe(401);
    const answer = await fetchAdvert(known, { Authorization: 'Basic good' });
    expect(await text(answer)).toBe(
      new TextDecoder().decode(knownTipAdvert('refs/heads/main', TIP, 'side-band\n')),
    );
    expect(server.seen).toHaveLength(2);
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
