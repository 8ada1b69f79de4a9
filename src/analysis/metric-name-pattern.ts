// Matching of `dryRun[].metricName` / `measurementRetention[].metricName` entries against metric names.

// Longer patterns are refused rather than compiled: they come from manifests, not from us.
const MAX_PATTERN_LENGTH = 253;

/**
 * True when `pattern` names `metricName`: exactly, or as a regular expression matching the whole name
 * (Argo matches unanchored; anchoring keeps a pattern like "error" from quietly covering "errors-5xx").
 * An invalid or over-long pattern matches only itself.
 */
export function metricNameMatches(pattern: string, metricName: string): boolean {
  if (pattern === metricName) return true;
  if (pattern.length > MAX_PATTERN_LENGTH) return false;
  try {
    return new RegExp(`^(?:${pattern})$`).test(metricName);
  } catch {
    return false;
  }
}
