// SigV4: the test verifier agrees with AWS's published example, and what Rollgate signs passes that verifier.
import { describe, expect, it } from 'vitest';
import { signSigv4 } from '../../../src/analysis/providers/sigv4-signer.ts';
import { sigv4Refusal, type ReceivedRequest } from '../../support/sigv4-verifier.ts';

const KEY = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

// AWS's Signature Version 4 test suite, "get-vanilla": GET / on example.amazonaws.com, 2015-08-30.
const GET_VANILLA: ReceivedRequest = {
  method: 'GET',
  url: '/',
  headers: {
    host: 'example.amazonaws.com',
    'x-amz-date': '20150830T123600Z',
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  body: '',
};

describe('the SigV4 verifier of the test support', () => {
  const expected = { ...KEY, region: 'us-east-1', service: 'service' };

  it('accepts AWS’s published get-vanilla example', () => {
    expect(sigv4Refusal(GET_VANILLA, expected)).toBeUndefined();
  });

  it.each([
    ['another path', { ...GET_VANILLA, url: '/other' }],
    ['another body', { ...GET_VANILLA, body: 'x' }],
    [
      'another date',
      { ...GET_VANILLA, headers: { ...GET_VANILLA.headers, 'x-amz-date': '20150830T123601Z' } },
    ],
  ])('refuses it with %s', (_name, request) => {
    expect(sigv4Refusal(request, expected)).toBe('signature does not match');
  });

  it('refuses another secret key and another scope', () => {
    expect(sigv4Refusal(GET_VANILLA, { ...expected, secretAccessKey: 'x' })).toBe('signature does not match');
    expect(sigv4Refusal(GET_VANILLA, { ...expected, region: 'eu-west-1' })).toBe('wrong credential scope');
  });
});

describe('signSigv4', () => {
  const now = new Date('2026-01-01T10:20:30.456Z');
  const body = 'query=up&timeout=30s';
  const sign = (sessionToken?: string) =>
    signSigv4(
      {
        url: new URL('https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-1/api/v1/query'),
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-scope-orgid': 'a' },
        body,
      },
      'eu-west-1',
      { ...KEY, ...(sessionToken && { sessionToken }) },
      now,
    );

  it('signs for the aps service at the given time, every header name lowercased', () => {
    const headers = sign();
    expect(headers['x-amz-date']).toBe('20260101T102030Z');
    expect(headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20260101\/eu-west-1\/aps\/aws4_request, SignedHeaders=[a-z;-]*host;[a-z;-]*x-scope-orgid, Signature=[0-9a-f]{64}$/,
    );
    expect(Object.keys(headers).every((k) => k === k.toLowerCase())).toBe(true);
    const request: ReceivedRequest = { method: 'POST', url: '/workspaces/ws-1/api/v1/query', headers, body };
    expect(sigv4Refusal(request, { ...KEY, region: 'eu-west-1', service: 'aps' })).toBeUndefined();
    // A header changed after signing breaks it.
    expect(
      sigv4Refusal(
        { ...request, headers: { ...headers, 'x-scope-orgid': 'b' } },
        { ...KEY, region: 'eu-west-1', service: 'aps' },
      ),
    ).toBe('signature does not match');
  });

  it('sends and signs a session token', () => {
    const headers = sign('session-token-value');
    expect(headers['x-amz-security-token']).toBe('session-token-value');
    const request: ReceivedRequest = { method: 'POST', url: '/workspaces/ws-1/api/v1/query', headers, body };
    expect(
      sigv4Refusal(request, {
        ...KEY,
        sessionToken: 'session-token-value',
        region: 'eu-west-1',
        service: 'aps',
      }),
    ).toBeUndefined();
  });
});
