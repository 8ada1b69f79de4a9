// Reading provider payloads: branch names from refs, repository URLs from loosely shaped objects.
import type { Interpretation } from '../webhook-types.ts';

/** `refs/heads/main` → `main`; anything else (tags, notes) → undefined. */
export function branchOfRef(ref: string | undefined): string | undefined {
  if (ref === undefined || !ref.startsWith('refs/heads/')) return undefined;
  const branch = ref.slice('refs/heads/'.length);
  return branch.length > 0 ? branch : undefined;
}

/** The non-empty strings among `values`, without duplicates. */
export function presentUrls(values: ReadonlyArray<string | null | undefined>): string[] {
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v.length > 0))];
}

/**
 * A push whose payload names a repository URL with a malformed `%` escape becomes an invalid request
 * (400, naming the field), instead of failing later while the push is routed (which answered 503 and
 * asked the forge to redeliver the same payload). Other interpretations pass through.
 */
export function refuseMalformedUrls(meaning: Interpretation): Interpretation {
  if (meaning.kind !== 'push') return meaning;
  for (const [index, url] of meaning.repositoryUrls.entries()) {
    try {
      decodeURIComponent(url);
    } catch {
      return {
        kind: 'invalid',
        reason: `repository URL ${index + 1} of the payload has a malformed % escape (percent-encode it as %25)`,
      };
    }
  }
  return meaning;
}
