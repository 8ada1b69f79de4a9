// The renderer interface: one renderer per kind of app (kustomize today; Helm would be one more module and a row in the table).
import type { AppInputs, AppKind } from './app-inputs.ts';
import type { RenderError } from './errors/render-error.ts';
import type { RenderProblem } from './render-problem.ts';
import type { RepositoryReader } from './repository-reader.ts';

/**
 * A render's result: the objects as multi-document YAML text, or the problems that stopped it.
 * `ran`: a renderer process ran for it (what the diff counts as a render; a cache hit did not).
 */
export type RenderOutcome =
  | { ok: true; text: string; ran: boolean }
  | { ok: false; problems: RenderProblem[]; error?: RenderError; ran: boolean };

/** What is shown in a source's status: which renderer, which version. */
export interface RendererIdentity {
  renderer: string;
  version: string;
}

/** Renders the apps of one kind. */
export interface AppRenderer {
  readonly kind: AppKind;
  readonly identity: RendererIdentity;
  /** The app rooted at `dir` in the tree `rootTree`, with its inputs and key; undefined when there is none. */
  collect(reader: RepositoryReader, rootTree: string, dir: string): Promise<AppInputs | undefined>;
  /** Renders an app collected by {@link collect} (from the cache when its key was rendered before). */
  render(reader: RepositoryReader, app: AppInputs): Promise<RenderOutcome>;
}

/** The renderers of a process, by kind; a kind without one is refused with {@link unrenderedKindMessage}. */
export type RendererTable = Partial<Record<AppKind, AppRenderer>>;

/** What Rollgate says about an app it has no renderer for, and what to do instead. */
export function unrenderedKindMessage(kind: AppKind): string {
  switch (kind) {
    case 'helm':
      return (
        'a Helm chart: Rollgate does not render Helm. Render the chart in CI (helm template) into a ' +
        'branch or folder Rollgate follows (docs/helm.md), or let Argo CD or Flux render it and run ' +
        'Rollgate in controller mode'
      );
    case 'kustomize':
      return 'a kustomization, and no kustomize renderer is configured';
  }
}
