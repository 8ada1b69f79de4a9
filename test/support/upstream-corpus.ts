// The upstream corpus: Argo Rollouts' examples and the traffic routers' CRDs, written outside this project
// and read in place from ../shared/corpus beside the repository, never copied in (their licences, and they
// are data that must stay as upstream wrote it). A clone of the repository alone has no ../shared: the
// tests that read the corpus then skip, each file saying so in one line, so `npm ci && npm test` passes
// on a fresh clone. ROLLGATE_REQUIRE_CORPUS=1 (set by .ci/run) turns the absence into a failure, so CI
// can never pass by skipping them. README.md "The upstream corpus" says how to get it.
import { statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** Where the corpus is expected: beside the repository, whatever folder the repository was cloned into. */
export const CORPUS_ROOT = resolve(REPO_ROOT, '..', 'shared', 'corpus');

/** The corpus's parts the tests read: Argo Rollouts' example manifests, and the traffic routers' CRDs. */
export type CorpusPart = 'argo-rollouts/examples' | 'crds';

/** The variable that makes a missing corpus fail the tests instead of skipping them. */
export const REQUIRE_CORPUS_ENV = 'ROLLGATE_REQUIRE_CORPUS';

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** One part of the corpus, as a test file sees it. */
export interface UpstreamCorpus {
  /** True when the part is absent: skip what reads it (`describe.skipIf(corpus.missing)`). */
  readonly missing: boolean;
  /** The part's folder (where it would be, when missing). */
  readonly folder: string;
  /** A path under the part's folder. */
  file(...names: string[]): string;
}

/**
 * One part of the corpus for the test file `testFile` (the caller's `import.meta.filename`). When the
 * part is absent, one line on stderr names the file and what it skips, and the caller skips the tests
 * that read it; under ROLLGATE_REQUIRE_CORPUS=1 this throws instead, which fails the file as it loads.
 */
export function upstreamCorpus(part: CorpusPart, testFile: string): UpstreamCorpus {
  const folder = resolve(CORPUS_ROOT, part);
  const missing = !isDirectory(folder);
  if (missing) {
    const file = relative(REPO_ROOT, testFile);
    const shown = relative(REPO_ROOT, folder);
    if (process.env[REQUIRE_CORPUS_ENV] === '1')
      throw new Error(
        `${file} needs the upstream corpus at ${shown}, which is missing (${REQUIRE_CORPUS_ENV}=1 makes that a failure; README.md "The upstream corpus" says how to get it)`,
      );
    // One raw line, not console.warn: vitest prints a header line of its own before a console call.
    process.stderr.write(
      `skipped in ${file}: the tests that read ${shown}, missing beside this clone (README.md "The upstream corpus" says how to get it)\n`,
    );
  }
  return { missing, folder, file: (...names) => join(folder, ...names) };
}
