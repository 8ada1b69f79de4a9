// Drift: does the live object still hold every value we would write (Git's manifest, our own CRDs)?

/** Metadata the API server or other controllers own; never drift. */
const IGNORED_METADATA = new Set([
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'selfLink',
  'ownerReferences',
  'finalizers',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function subsetDiffs(desired: unknown, live: unknown, path: string, out: string[]): void {
  if (isRecord(desired)) {
    if (!isRecord(live)) {
      out.push(path || '(root)');
      return;
    }
    for (const [key, value] of Object.entries(desired)) {
      if (path === 'metadata' && IGNORED_METADATA.has(key)) continue;
      if (path === '' && key === 'status') continue;
      subsetDiffs(value, live[key], path ? `${path}.${key}` : key, out);
    }
    return;
  }
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || live.length !== desired.length) {
      out.push(path);
      return;
    }
    desired.forEach((item, i) => subsetDiffs(item, live[i], `${path}[${i}]`, out));
    return;
  }
  // Kubernetes normalises some scalars (e.g. port numbers written as strings); compare as text.
  if (desired !== live && String(desired) !== String(live)) out.push(path);
}

/**
 * The field paths where `live` no longer holds what `desired` (the object as applied from Git) says.
 * Fields that Git does not set (defaults, status, fields other controllers own) never count: this is a
 * subset comparison, as with server-side apply's notion of the fields we manage.
 */
export function driftedFields(desired: Record<string, unknown>, live: Record<string, unknown>): string[] {
  const out: string[] = [];
  subsetDiffs(desired, live, '', out);
  return out;
}
