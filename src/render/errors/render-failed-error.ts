// Kustomize ran and refused the kustomization: its own message, trimmed and bounded.
import { RenderError } from './render-error.ts';

/** `kustomize build` exited with an error; `message` is kustomize's, `exitCode` its status. */
export class RenderFailedError extends RenderError {
  override readonly name = 'RenderFailedError';
  readonly code = 'render.failed';

  constructor(
    message: string,
    file: string,
    readonly exitCode: number | null,
  ) {
    super(message, file);
  }
}
