// A render wrote more than render.kustomize.maxOutputBytes and was killed before more was read.
import { RenderError } from './render-error.ts';

/** The renderer's output passed `limit` bytes; its process was killed and nothing of it is used. */
export class RenderOutputTooLargeError extends RenderError {
  override readonly name = 'RenderOutputTooLargeError';
  readonly code = 'render.output-too-large';

  constructor(
    file: string,
    readonly limit: number,
  ) {
    super(`kustomize output passed ${limit} bytes and was stopped (render.kustomize.maxOutputBytes)`, file);
  }
}
