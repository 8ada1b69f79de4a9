// Refuses, before rendering, what a kustomization names that Rollgate never reads: remote bases, absolute paths, paths out of the repository.
import type { RenderProblem } from '../render-problem.ts';
import { resolveRelative } from '../repository-reader.ts';
import type { KustomizationReference } from './kustomization-file.ts';

/** Forges kustomize fetches a base from when a path starts with their host. */
const FORGE_HOSTS = /^(github\.com|gitlab\.com|bitbucket\.org|dev\.azure\.com|ssh\.dev\.azure\.com)(\/|:)/i;

/**
 * Why kustomize would fetch `path` over the network, or undefined for a local path. Not every remote
 * form kustomize accepts is listed here: the render's environment stops any other (docs/security.md).
 */
export function remoteForm(path: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) return 'a URL';
  if (/^git::/i.test(path)) return 'a git:: address';
  if (/^[\w.-]+@[\w.-]+:/.test(path)) return 'an ssh address';
  if (FORGE_HOSTS.test(path)) return 'a repository on a forge';
  if (/[?&](ref|version|timeout|submodules)=/.test(path)) return 'a remote address (?ref=)';
  return undefined;
}

/**
 * The repository path `reference` names from the kustomization in `dir`, or the problem that keeps it
 * from being read (reported at the kustomization file and the reference's line).
 */
export function preflightReference(
  file: string,
  dir: string,
  reference: KustomizationReference,
): { path: string } | { problem: RenderProblem } {
  const at = (message: string): { problem: RenderProblem } => ({
    problem: { file, line: reference.line, message: `${reference.field}: ${message}` },
  });
  const remote = remoteForm(reference.path);
  if (remote !== undefined)
    return at(
      `${reference.path} is ${remote}: Rollgate renders only what is in the source's repository ` +
        '(vendor the base into the repository, or pin it in CI)',
    );
  if (reference.path.startsWith('/'))
    return at(`${reference.path} is an absolute path: write it relative to the kustomization`);
  const path = resolveRelative(dir, reference.path);
  if (path === 'outside') return at(`${reference.path} leaves the repository`);
  return { path };
}
