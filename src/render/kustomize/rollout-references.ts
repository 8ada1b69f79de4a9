// Teaches kustomize the name references of Rollouts (PLACEHOLDER: replaced by wt/rolloutrefs; the lead takes theirs).
//
// Minimal body so the render can materialize the file: the real configuration (every reference, label
// and image field of Rollouts and AnalysisTemplates) is written on branch wt/rolloutrefs.
import { isMap, isSeq, parseDocument } from 'yaml';

/** The file written beside every materialized kustomization; a dot-file, so it never clashes with a user's. */
export const ROLLOUT_REFERENCES_FILE_NAME = '.rollgate-rollout-references.yaml';

/** Kustomize transformer configuration: the Rollout's fields that name a ConfigMap. */
export function rolloutReferencesConfiguration(): string {
  return [
    'nameReference:',
    '  - kind: ConfigMap',
    '    version: v1',
    '    fieldSpecs:',
    '      - kind: Rollout',
    '        path: spec/template/spec/containers/envFrom/configMapRef/name',
    '',
  ].join('\n');
}

/** The kustomization text with {@link ROLLOUT_REFERENCES_FILE_NAME} added to its `configurations:`. */
export function withRolloutReferences(kustomizationText: string): string {
  const document = parseDocument(kustomizationText);
  // Not a mapping (or not YAML): left as it is, so kustomize reports it in its own words.
  if (document.errors.length > 0 || !isMap(document.contents)) return kustomizationText;
  const configurations = document.get('configurations');
  if (isSeq(configurations)) configurations.add(ROLLOUT_REFERENCES_FILE_NAME);
  else if (configurations === undefined || configurations === null)
    document.set('configurations', [ROLLOUT_REFERENCES_FILE_NAME]);
  return document.toString();
}
