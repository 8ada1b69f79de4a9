// The kustomize transformer configuration that teaches kustomize a Rollout's references and labels, and its entry in a kustomization.
import { Document, isMap, isScalar, isSeq, parseDocument, visit } from 'yaml';
import { REFERENCE_FIELDS, ROLLOUT } from '../../manifest/object-references.ts';
import type { GroupedKind } from '../../manifest/object-references.ts';

/**
 * The file Rollgate writes beside every kustomization it renders and lists under `configurations:`.
 * A dot-file, so it does not show among the user's own files.
 */
export const ROLLOUT_REFERENCES_FILE_NAME = '.rollgate-rollout-references.yaml';

/** One kustomize field spec: which objects (by group and kind) and where in them. */
interface FieldSpec {
  path: string;
  kind: string;
  group?: string;
  create?: boolean;
}

// Kustomize separates the keys of a path with "/"; a key holding one (a plugin's name) escapes it.
function kustomizePath(keys: readonly string[]): string {
  return keys.map((key) => key.replaceAll('/', '\\/')).join('/');
}

function fieldSpecs(kind: GroupedKind, path: readonly string[], create?: boolean): FieldSpec[] {
  return kind.groups.map((group) => ({
    path: kustomizePath(path),
    kind: kind.kind,
    ...(group === '' ? {} : { group }),
    ...(create === undefined ? {} : { create }),
  }));
}

/** A target of name references, as kustomize selects it: one entry per group. */
interface NameReference {
  kind: string;
  group?: string;
  version?: string;
  fieldSpecs: FieldSpec[];
}

function nameReferences(): NameReference[] {
  const byTarget = new Map<string, NameReference>();
  for (const { referrer, path, target } of REFERENCE_FIELDS) {
    for (const group of target.groups) {
      const key = `${group}/${target.kind}`;
      let entry = byTarget.get(key);
      if (entry === undefined) {
        entry = {
          kind: target.kind,
          ...(group === '' ? {} : { group }),
          ...(target.version === undefined ? {} : { version: target.version }),
          fieldSpecs: [],
        };
        byTarget.set(key, entry);
      }
      entry.fieldSpecs.push(...fieldSpecs(referrer, path));
    }
  }
  return [...byTarget.values()];
}

const TEMPLATE_LABELS = ['spec', 'template', 'metadata', 'labels'];
const AFFINITY_SELECTORS = ['podAffinity', 'podAntiAffinity'].flatMap((affinity) => [
  [
    'spec',
    'template',
    'spec',
    'affinity',
    affinity,
    'preferredDuringSchedulingIgnoredDuringExecution',
    'podAffinityTerm',
    'labelSelector',
    'matchLabels',
  ],
  [
    'spec',
    'template',
    'spec',
    'affinity',
    affinity,
    'requiredDuringSchedulingIgnoredDuringExecution',
    'labelSelector',
    'matchLabels',
  ],
]);

/**
 * The configuration's text. Labels and annotations go where kustomize puts them in a Deployment: the
 * selector and the pod template (created when absent, as for a Deployment), and the pod-affinity
 * selectors that already exist. The `create` flags are the ones kustomize uses for a Deployment and
 * the ones Argo's documentation suggests for a Rollout: kustomize refuses two configurations that
 * name the same field with different flags, and users may already list such a file of their own.
 */
export function rolloutReferencesConfiguration(): string {
  // The same text for every render: building it (a Document of several hundred field specs, about 50 KB)
  // costs tens of milliseconds, once per kustomization written, so it is built once per process.
  configurationText ??= buildConfiguration();
  return configurationText;
}

let configurationText: string | undefined;

function buildConfiguration(): string {
  const configuration = {
    nameReference: nameReferences(),
    commonLabels: [
      ...fieldSpecs(ROLLOUT, ['spec', 'selector', 'matchLabels'], true),
      ...fieldSpecs(ROLLOUT, TEMPLATE_LABELS, true),
      ...AFFINITY_SELECTORS.flatMap((path) => fieldSpecs(ROLLOUT, path, false)),
    ],
    templateLabels: fieldSpecs(ROLLOUT, TEMPLATE_LABELS, true),
    commonAnnotations: fieldSpecs(ROLLOUT, ['spec', 'template', 'metadata', 'annotations'], true),
    replicas: fieldSpecs(ROLLOUT, ['spec', 'replicas'], true),
  };
  const header = [
    'Written by Rollgate when it renders this kustomization; not part of the repository.',
    'It tells kustomize which fields of a Rollout, AnalysisTemplate and Experiment name other objects',
    '(generated ConfigMaps and Secrets, Services, Ingresses, routes, templates) and where their labels go,',
    'so namePrefix/nameSuffix, generator hashes and commonLabels reach them as they reach a Deployment.',
  ];
  const doc = new Document(configuration);
  // One field spec a line: the file has several hundred of them.
  visit(doc, {
    Map(_, node) {
      if (node.has('path')) node.flow = true;
    },
  });
  doc.commentBefore = header.map((line) => ` ${line}`).join('\n');
  return doc.toString({ lineWidth: 0 });
}

/**
 * The kustomization's text with {@link ROLLOUT_REFERENCES_FILE_NAME} listed last under
 * `configurations:` (the list created when absent, the user's own entries kept, never listed twice);
 * comments and the rest of the text are kept. Text that is not one YAML mapping, or whose
 * `configurations:` is not a list, is returned unchanged: kustomize reports that itself.
 */
export function withRolloutReferences(kustomizationText: string): string {
  const doc = parseDocument(kustomizationText);
  if (doc.errors.length > 0 || !isMap(doc.contents)) return kustomizationText;
  const existing = doc.contents.get('configurations', true);
  if (existing === undefined || (isScalar(existing) && existing.value === null)) {
    doc.setIn(['configurations'], doc.createNode([ROLLOUT_REFERENCES_FILE_NAME]));
  } else if (isSeq(existing)) {
    const listed = existing.items.some(
      (item) => isScalar(item) && item.value === ROLLOUT_REFERENCES_FILE_NAME,
    );
    if (listed) return kustomizationText;
    doc.addIn(['configurations'], ROLLOUT_REFERENCES_FILE_NAME);
  } else {
    return kustomizationText;
  }
  // No folding of long lines, no padding inside [flow, lists]: the user's text stays as it was written.
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}
