// Remote URLs: credentials moved out of the URL and never shown.
import { describe, expect, it } from 'vitest';
import { redactUrl, splitRemoteUrl } from '../../../src/git/remote-url.ts';

describe('splitRemoteUrl', () => {
  it('moves user and password out of the URL, decoded', () => {
    expect(splitRemoteUrl('https://bot:p%40ss@git.example/org/apps.git')).toEqual({
      url: 'https://git.example/org/apps.git',
      credentials: { username: 'bot', password: 'p@ss' },
    });
    expect(splitRemoteUrl('http://127.0.0.1:9000/apps.git')).toEqual({
      url: 'http://127.0.0.1:9000/apps.git',
      credentials: {},
    });
  });

  it('redacts even strings that are not valid URLs', () => {
    expect(redactUrl('https://user:secret@host/x')).toBe('https://host/x');
    expect(splitRemoteUrl('not a url://user:secret@').url).not.toContain('secret');
  });
});
