// Removes secret values from text bound for status, the dashboard and logs, in the forms they come back in.

/** What a removed secret is replaced with. */
export const REDACTED = '[redacted]';

// Base64 runs shorter than this are too likely to occur by chance to be worth redacting.
const MIN_BASE64_RUN = 6;

const SYNTAX = /[\\^$.*+?()[\]{}|/]/g;

function escapeRegExp(text: string): string {
  return text.replace(SYNTAX, '\\$&');
}

/**
 * A pattern matching `secret` written with any letter case and any of its characters percent-encoded
 * (upper- or lowercase hex, `+` for a space): a secret placed in a URL's host comes back lowercased,
 * one in its path or query percent-encoded, by the provider's URL parser or the server's answer.
 */
function plainOrPercentEncoded(secret: string): string {
  let pattern = '';
  for (const char of secret) {
    const bytes = [...new TextEncoder().encode(char)];
    const encoded = bytes.map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    const forms = [escapeRegExp(char), escapeRegExp(encoded)];
    if (char === ' ') forms.push('\\+');
    pattern += `(?:${forms.join('|')})`;
  }
  return pattern;
}

function base64Of(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/**
 * The base64 text of `secret` wherever it sits in a longer encoded value (a Basic Authorization
 * header carries `user:password`): for each of the three byte alignments, the characters that depend
 * on the secret's bytes alone, in standard and URL-safe alphabets.
 */
function base64Runs(secret: string): string[] {
  const bytes = new TextEncoder().encode(secret);
  const runs = new Set<string>();
  for (let shift = 0; shift < 3; shift++) {
    const padded = new Uint8Array(shift + bytes.length);
    padded.set(bytes, shift);
    const text = base64Of(padded);
    // Character i encodes bits [6i, 6i + 6): keep those wholly inside the secret's bits.
    const run = text.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
    if (run.length >= MIN_BASE64_RUN) {
      runs.add(run);
      runs.add(run.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...runs];
}

/**
 * A scrubber for `secrets`: a function replacing each secret in a text with {@link REDACTED}, in any
 * letter case, percent-encoded (wholly or in part, any hex case), JSON-escaped, or base64-encoded
 * (standard or URL-safe, at any alignment). Empty secrets are ignored. Build it once per measurement.
 */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
  const nonEmpty = [...new Set(secrets.filter((s) => s.length > 0))];
  if (nonEmpty.length === 0) return (text) => text;
  const textual = nonEmpty.flatMap((secret) => {
    const escaped = JSON.stringify(secret).slice(1, -1);
    return escaped === secret
      ? [plainOrPercentEncoded(secret)]
      : [plainOrPercentEncoded(secret), plainOrPercentEncoded(escaped)];
  });
  const encoded = nonEmpty.flatMap(base64Runs).map(escapeRegExp);
  // Longest first, so a secret containing another is removed whole.
  const byLength = (a: string, b: string): number => b.length - a.length;
  const textualPattern = new RegExp(textual.sort(byLength).join('|'), 'giu');
  const encodedPattern = encoded.length > 0 ? new RegExp(encoded.sort(byLength).join('|'), 'gu') : undefined;
  return (text) => {
    const once = text.replace(textualPattern, REDACTED);
    return encodedPattern ? once.replace(encodedPattern, REDACTED) : once;
  };
}
