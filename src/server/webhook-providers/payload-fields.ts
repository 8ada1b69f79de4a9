// Reading provider payloads: branch names from refs, repository URLs from loosely shaped objects.

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
