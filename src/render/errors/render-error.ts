// The base of every render error: the app's kustomization (or chart) file it is about, and a stable code.

/**
 * What every render error shares: the file the problem is shown at (the app's kustomization) and the
 * renderer's own message. Each kind subclasses it with its own `name` and stable `code`.
 */
export abstract class RenderError extends Error {
  abstract override readonly name: string;
  abstract readonly code: string;

  constructor(
    message: string,
    /** Repository path of the app's kustomization file (or the directory rendered, for a folder). */
    readonly file: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
