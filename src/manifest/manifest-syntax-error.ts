// The error for a YAML document that cannot be read, with the file, line and column of the fault.
import { manifestDocumentError } from './manifest-document-error.ts';

/** A YAML document is not valid YAML (bad indentation, duplicate key, unclosed bracket, …). */
export class ManifestSyntaxError extends manifestDocumentError(
  'ManifestSyntaxError',
  'rollgate.spec.yaml-syntax',
  'invalid YAML',
) {}
