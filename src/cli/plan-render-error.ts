// A kustomization `rollgate plan` must render (it reads a planned file) that does not render: exit 1, kustomize's own words.

/** Says which kustomization, on which side (the work tree or the `--from` revision), and each problem. */
export class PlanRenderError extends Error {
  override readonly name = 'PlanRenderError';
  readonly code = 'plan.render_failed';

  constructor(
    /** The app's kustomization file, as shown. */
    readonly kustomization: string,
    /** The `--from` revision, or undefined for the work tree. */
    readonly revision: string | undefined,
    /** `file:line: message` for each problem, files as shown. */
    readonly problems: readonly string[],
  ) {
    super(
      `${kustomization}${revision === undefined ? '' : ` at ${revision}`} does not render: ${problems.join('; ')}`,
    );
  }
}
