// The number in a measurement's value, for charts: Prometheus answers `[0.99]`, a web metric `42`, a job nothing.

/**
 * The value as one number: a JSON number, a numeric string, or an array holding exactly one of those (a
 * one-series query result). Undefined for anything else (several series, text, empty), which a chart
 * leaves out rather than guessing.
 */
export function measuredNumber(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = value.trim();
  }
  if (Array.isArray(parsed)) {
    if (parsed.length !== 1) return undefined;
    parsed = parsed[0];
  }
  const number = typeof parsed === 'number' ? parsed : typeof parsed === 'string' ? Number(parsed) : NaN;
  return Number.isFinite(number) && !(typeof parsed === 'string' && parsed.trim() === '')
    ? number
    : undefined;
}
