// An app at one commit as the renderers see it: its root, every file and tree it reads, its key, and what keeps it from rendering.
import type { RenderProblem } from './render-problem.ts';

/** The kinds of app a repository may hold; each has its marker files and (maybe) a renderer. */
export type AppKind = 'kustomize' | 'helm';

/**
 * One thing a render reads. `kustomization`/`file`: a blob, written out; `tree`: a directory named where
 * a kustomization was expected but holding none (created empty, so kustomize says what is missing);
 * `missing`, `skipped` (a symlink or submodule): not written, so kustomize reports the file absent.
 */
export interface RenderInput {
  path: string;
  type: 'kustomization' | 'file' | 'tree' | 'missing' | 'skipped';
  /** The object id (blob or tree); empty for `missing`. */
  oid: string;
}

/** An app at one commit. */
export interface AppInputs {
  kind: AppKind;
  /** The root directory (repository path). */
  dir: string;
  /** The file its objects and render errors are reported at (its kustomization file). */
  file: string;
  /** Sorted by path. */
  inputs: RenderInput[];
  /** Preflight problems (each at a file and line): the app is not rendered. */
  problems: RenderProblem[];
  /** Digest of the inputs and of the renderer: equal keys render equal output. */
  key: string;
}
