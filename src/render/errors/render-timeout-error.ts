// A render took longer than render.kustomize.timeoutSeconds and was killed.
import { RenderError } from './render-error.ts';

/** The renderer did not finish within `timeoutMs`; its process was killed. */
export class RenderTimeoutError extends RenderError {
  override readonly name = 'RenderTimeoutError';
  readonly code = 'render.timeout';

  constructor(
    file: string,
    readonly timeoutMs: number,
  ) {
    super(
      `kustomize did not finish within ${timeoutMs / 1000} s and was stopped (render.kustomize.timeoutSeconds)`,
      file,
    );
  }
}
