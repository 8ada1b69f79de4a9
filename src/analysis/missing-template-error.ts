// The error for a nested analysis template reference that names no template.

/** A template named in another template's `templates` does not exist. */
export class MissingTemplateError extends Error {
  override readonly name = 'MissingTemplateError';
  readonly code = 'rollgate.analysis.missing-template';

  constructor(
    /** `Kind/name` of the template that was not found. */
    readonly template: string,
    /** `Kind/name` of the template whose `templates` names it. */
    readonly referencedBy: string,
  ) {
    super(`${template} (named in ${referencedBy} spec.templates) was not found`);
  }
}
