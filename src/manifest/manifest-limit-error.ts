// The error for YAML refused because reading it would cost too much (alias bombs, oversized files).
import { manifestDocumentError } from './manifest-document-error.ts';

/** A YAML input exceeds a resource bound: too many alias expansions, or too many bytes. */
export class ManifestLimitError extends manifestDocumentError(
  'ManifestLimitError',
  'rollgate.spec.yaml-limit',
  'refused',
) {}
