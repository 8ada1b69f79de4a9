import { describe, expect, it } from 'vitest';
import { webhookUrl } from '../../../src/notify/services/webhook-url.ts';

describe('webhookUrl: a template path adds to the configured URL, never moves it', () => {
  it.each([
    ['https://hooks.example.com', '', 'https://hooks.example.com'],
    ['https://hooks.example.com/', '/events', 'https://hooks.example.com/events'],
    [
      'https://hooks.example.com/api',
      '/v1/events?rollout=web',
      'https://hooks.example.com/api/v1/events?rollout=web',
    ],
    ['https://hooks.example.com/api', '?rollout=web', 'https://hooks.example.com/api?rollout=web'],
    ['http://127.0.0.1:8080/hook', '/a%20b', 'http://127.0.0.1:8080/hook/a%20b'],
  ])('%s + %j → %s', (base, path, url) => {
    expect(webhookUrl(base, path)).toEqual({ url });
  });

  it.each([
    ['another host', 'https://hooks.example.com', '.attacker.example/steal'],
    ['another port', 'http://127.0.0.1:808', '0/steal'],
    ['userinfo', 'https://hooks.example.com', '@attacker.example/steal'],
    ['userinfo after a slash', 'https://hooks.example.com', '/x@attacker.example'],
    ['a protocol-relative path', 'https://hooks.example.com', '//attacker.example/steal'],
    ['a backslash', 'https://hooks.example.com', '/\\attacker.example'],
    ['CR/LF', 'https://hooks.example.com', '/events\r\nX-Injected: 1'],
    ['a NUL', 'https://hooks.example.com', '/events\u0000'],
    ['a dot-dot segment out of the configured path', 'https://hooks.example.com/tenant-a/', '/../tenant-b'],
    ['an encoded dot-dot segment', 'https://hooks.example.com/tenant-a', '/%2E%2e/tenant-b'],
    ['a fragment', 'https://hooks.example.com', '/x#y'],
    ['a path that is not one', 'https://hooks.example.com', 'x'],
  ])('refuses %s', (_, base, path) => {
    expect(webhookUrl(base, path)).toHaveProperty('refused');
  });
});
