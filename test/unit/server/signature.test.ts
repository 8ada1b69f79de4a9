// Webhook signature checks.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkHmacHeader, constantTimeEqual, hmacSha256Hex } from '../../../src/server/signature.ts';

const body = Buffer.from('{"ref":"refs/heads/main"}');
const good = createHmac('sha256', 'k').update(body).digest('hex');

describe('checkHmacHeader', () => {
  it('accepts the HMAC-SHA256 of the exact body, prefixed or bare as the provider sends it', () => {
    expect(hmacSha256Hex('k', body)).toBe(good);
    expect(checkHmacHeader(`sha256=${good}`, 'X-Hub-Signature-256', 'k', body, true)).toBeUndefined();
    expect(
      checkHmacHeader(`sha256=${good.toUpperCase()}`, 'X-Hub-Signature-256', 'k', body, true),
    ).toBeUndefined();
    expect(checkHmacHeader(good, 'X-Gitea-Signature', 'k', body, false)).toBeUndefined();
  });

  it('names what is wrong without revealing the expected signature', () => {
    expect(checkHmacHeader(undefined, 'X-Hub-Signature-256', 'k', body, true)).toBe(
      'missing X-Hub-Signature-256 header',
    );
    expect(checkHmacHeader(`sha1=${good}`, 'X-Hub-Signature-256', 'k', body, true)).toContain(
      'not a sha256=',
    );
    const reason = checkHmacHeader(`sha256=${good}`, 'X-Hub-Signature-256', 'other', body, true);
    expect(reason).toContain('does not match');
    expect(reason).not.toContain(good);
    expect(checkHmacHeader(`sha256=${good}`, 'X-Hub-Signature-256', 'k', Buffer.from('{}'), true)).toContain(
      'does not match',
    );
  });
});

describe('constantTimeEqual', () => {
  it('compares strings of any length', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
  });
});
