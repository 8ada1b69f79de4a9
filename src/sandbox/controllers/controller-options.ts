// Options shared by the simulated controllers and kubelet, plus the missing-image glob matcher.

/** How the simulated cluster behaves beyond what each pod asks for. */
export interface ControllerOptions {
  /** Glob patterns (`*` any run of characters, `?` one) of images the "registry" lacks, e.g. `app:9.*`. */
  missingImages: string[];
  /** How long a healthy pod takes from creation to Ready (default 1000 ms). */
  readyDelayMs: number;
}

/** The defaults the sandbox starts with. */
export const defaultControllerOptions: ControllerOptions = { missingImages: [], readyDelayMs: 1000 };

function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('')
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\/]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}

/** Docker's normalization: `app:1` → `docker.io/library/app:1`, `ghcr.io/x/y` → `ghcr.io/x/y:latest`. */
export function normalizeImage(image: string): string {
  const slash = image.indexOf('/');
  const first = slash === -1 ? '' : image.slice(0, slash);
  const hasRegistry = first.includes('.') || first.includes(':') || first === 'localhost';
  let named = hasRegistry ? image : slash === -1 ? `docker.io/library/${image}` : `docker.io/${image}`;
  const lastSegment = named.slice(named.lastIndexOf('/') + 1);
  if (!lastSegment.includes(':') && !lastSegment.includes('@')) named = `${named}:latest`;
  return named;
}

/**
 * True when the image matches one of the missing-image patterns, compared against the image as written
 * in the pod spec and against its normalized form (so `app:9.*` and `docker.io/library/app:9.*` both work).
 */
export function isMissingImage(image: string, patterns: readonly string[]): boolean {
  if (patterns.length === 0) return false;
  const normalized = normalizeImage(image);
  return patterns.some((pattern) => {
    const regexp = globToRegExp(pattern);
    return regexp.test(image) || regexp.test(normalized);
  });
}
