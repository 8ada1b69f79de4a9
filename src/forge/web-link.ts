// A link a forge answered with, checked before Rollgate writes it anywhere a person may follow it.

/**
 * `value` when it is an absolute `http:` or `https:` URL without credentials, whitespace or control
 * characters; undefined otherwise. A forge (or anything answering in its place) can return any string as a
 * pull request's URL; Rollgate writes it into Events, notifications, `rollgate promotions` and the dashboard,
 * where a `javascript:` or `data:` link would run in a reader's browser, so those are dropped, never shown.
 */
export function webLink(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return undefined;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused here
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  return value;
}
