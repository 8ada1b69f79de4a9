// No renderer can run: no kustomize binary was found, or the one configured could not be started.
import { RenderError } from './render-error.ts';

/** There is no kustomize to run (none configured, none on PATH, no kubectl), or it failed to start. */
export class RendererUnavailableError extends RenderError {
  override readonly name = 'RendererUnavailableError';
  readonly code = 'render.unavailable';
}
