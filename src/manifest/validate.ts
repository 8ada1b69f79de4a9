// Validation of Rollout and analysis objects: shape (zod), unsupported fields, semantics, cross-object rules.
import type { z } from 'zod';
import { analysisRunSchema, analysisTemplateSchema, clusterAnalysisTemplateSchema } from './analysis.ts';
import { checkAnalysisSpec } from './analysis-checks.ts';
import { experimentSchema, type Experiment } from './experiment.ts';
import { checkExperiment } from './experiment-checks.ts';
import { fleetSchema, type FleetObject } from './fleet.ts';
import { checkFleet } from './fleet-checks.ts';
import { checkGeneratedNameReferences } from './generated-name-references.ts';
import { checkNestedTemplateRefs, templateRefGraph, type TemplateRefGraph } from './nested-template-refs.ts';
import { ARGO_API_VERSION, ROLLGATE_API_VERSION } from './api-version.ts';
import { issueMessage } from './issue-messages.ts';
import { generatableObjectMetaSchema } from './kube-meta.ts';
import { parseManifests } from './manifest.ts';
import { checkObjectLabels } from './pod-template-checks.ts';
import type { ManifestObject, ParsedManifests, ParseManifestsOptions } from './manifest.ts';
import { declaredRolloutSchema } from './rollout.ts';
import type { DeclaredRollout } from './rollout.ts';
import { checkRollout } from './rollout-checks.ts';
import type { AnalysisTemplateLookup, RolloutCheckContext } from './rollout-checks.ts';
import { checkUnsupportedAnalysisFields, checkUnsupportedRolloutFields } from './unsupported-fields.ts';
import { IssueCollector } from './validation-issue.ts';
import { unknownFields } from './unknown-fields.ts';
import type { ValidationIssue } from './validation-issue.ts';

export type { ValidationIssue } from './validation-issue.ts';
export type { AnalysisTemplateLookup, RolloutCheckContext } from './rollout-checks.ts';
export { EXPECT_IN_CLUSTER_ANNOTATION } from './rollout-checks.ts';
export { checkGeneratedNameReferences } from './generated-name-references.ts';
export type { GeneratedNameReferenceIssue } from './generated-name-references.ts';

/** The kinds Rollgate validates (in the argoproj.io or rollgate.dev group); every other kind is skipped. */
export const VALIDATED_KINDS = [
  'Rollout',
  'AnalysisTemplate',
  'ClusterAnalysisTemplate',
  'AnalysisRun',
  'Experiment',
  'Fleet',
] as const;
export type ValidatedKind = (typeof VALIDATED_KINDS)[number];

const GROUPS = new Set([ARGO_API_VERSION.split('/')[0], ROLLGATE_API_VERSION.split('/')[0]]);

/** True when the object is one of {@link VALIDATED_KINDS} in the Argo or Rollgate API group. */
export function isValidatedKind(obj: { apiVersion: string; kind: string }): boolean {
  // A Fleet is Rollgate's own kind: argoproj.io has none.
  if (obj.kind === 'Fleet') return obj.apiVersion.split('/')[0] === ROLLGATE_API_VERSION.split('/')[0];
  return (
    GROUPS.has(obj.apiVersion.split('/')[0]) && (VALIDATED_KINDS as readonly string[]).includes(obj.kind)
  );
}

/** Where a reported document starts, and what it says it is (null where it does not say). */
export interface DocumentIdentity {
  file: string;
  line: number;
  col: number;
  apiVersion: string | null;
  kind: string | null;
  name: string | null;
}

/** The result for one object (or for one unreadable YAML document, with kind null). */
export interface ObjectValidation extends DocumentIdentity {
  namespace: string | null;
  valid: boolean;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
}

/** A document that was not validated, and why (non-Kubernetes YAML, or a kind Rollgate does not handle). */
export interface SkippedDocument extends DocumentIdentity {
  reason: string;
}

export interface ValidationReport {
  objects: ObjectValidation[];
  skipped: SkippedDocument[];
  summary: { valid: number; invalid: number; skipped: number };
}

// An AnalysisRun or an Experiment may be written with `metadata.generateName` instead of a name (it is
// created, then only observed, as in Argo's examples and e2e suite); Rollouts and analysis templates are
// referenced by name and need one.
const SCHEMAS: Record<ValidatedKind, z.ZodType> = {
  Rollout: declaredRolloutSchema,
  AnalysisTemplate: analysisTemplateSchema,
  ClusterAnalysisTemplate: clusterAnalysisTemplateSchema,
  AnalysisRun: analysisRunSchema.extend({ metadata: generatableObjectMetaSchema }),
  Experiment: experimentSchema.extend({ metadata: generatableObjectMetaSchema }),
  Fleet: fleetSchema,
};

// What the API server accepts as generateName: the start of a DNS subdomain (it appends 5 characters).
const GENERATE_NAME_PREFIX = /^[a-z0-9][-a-z0-9.]*$/;

function isMetadataName(path: ReadonlyArray<PropertyKey>): boolean {
  return path.length === 2 && path[0] === 'metadata' && path[1] === 'name';
}

/**
 * Validates one parsed object: unsupported fields, then shape, then (when the shape is valid)
 * semantics. Analysis-template references are checked only when `context.templates` is given.
 */
export function validateObject(
  obj: ManifestObject,
  context: RolloutCheckContext & { templateRefs?: TemplateRefGraph } = {},
): ObjectValidation {
  const sink = new IssueCollector(obj.lineOf);
  const kind = obj.kind as ValidatedKind;
  const schema = isValidatedKind(obj) ? SCHEMAS[kind] : undefined;
  if (schema === undefined) {
    sink.error([], `kind ${obj.kind} (${obj.apiVersion}) is not a kind Rollgate validates`);
  } else {
    if (kind === 'Rollout') checkUnsupportedRolloutFields(obj.value, sink);
    else if (kind !== 'Experiment' && kind !== 'Fleet') checkUnsupportedAnalysisFields(obj.value, sink);
    const result = schema.safeParse(obj.value, { reportInput: true, error: issueMessage });
    if (result.success) {
      for (const path of unknownFields(schema, obj.value)) {
        sink.warn(path, 'unknown field: ignored (not part of the argoproj.io/v1alpha1 schema)');
      }
      // The API server checks every object's labels and annotations, these kinds' included.
      checkObjectLabels((obj.value as { metadata?: unknown }).metadata, ['metadata'], sink);
      if (kind === 'Rollout') checkRollout(result.data as DeclaredRollout, sink, context);
      else if (kind === 'Experiment') checkExperiment(result.data as Experiment, sink, context);
      else if (kind === 'Fleet') checkFleet(result.data as FleetObject, sink);
      else checkAnalysisSpec((result.data as z.infer<typeof analysisTemplateSchema>).spec, sink);
      if (
        kind !== 'Rollout' &&
        kind !== 'AnalysisRun' &&
        kind !== 'Experiment' &&
        kind !== 'Fleet' &&
        context.templateRefs !== undefined
      )
        checkNestedTemplateRefs(
          result.data as z.infer<typeof analysisTemplateSchema>,
          context.templateRefs,
          sink,
        );
      if (
        obj.name === undefined &&
        obj.generateName !== undefined &&
        !GENERATE_NAME_PREFIX.test(obj.generateName)
      )
        sink.error(
          ['metadata', 'generateName'],
          `must start a DNS subdomain (lowercase letters, digits, "-" and "."), got ${JSON.stringify(obj.generateName)}`,
        );
    } else {
      for (const issue of result.error.issues) {
        const message =
          isMetadataName(issue.path) && obj.name === undefined && obj.generateName !== undefined
            ? `${issue.message} (${kind}s are referenced by name; generateName is for objects nothing refers to, such as AnalysisRuns, Experiments and Jobs)`
            : issue.message;
        sink.error(
          issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment))),
          message,
        );
      }
    }
  }
  return {
    ...identityOf(obj),
    namespace: obj.namespace ?? null,
    valid: sink.errors.length === 0,
    errors: sink.errors,
    warnings: sink.warnings,
  };
}

// Namespace matching for references: an unset namespace is the one the object will be applied to, so
// it matches any namespace (we cannot know it offline).
function sameNamespace(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || a === b;
}

function templateLookup(objects: readonly ManifestObject[]): AnalysisTemplateLookup {
  const namespaced = new Map<string, Array<string | undefined>>();
  const cluster = new Set<string>();
  for (const obj of objects) {
    if (obj.name === undefined || !isValidatedKind(obj)) continue;
    if (obj.kind === 'ClusterAnalysisTemplate') cluster.add(obj.name);
    if (obj.kind === 'AnalysisTemplate')
      namespaced.set(obj.name, [...(namespaced.get(obj.name) ?? []), obj.namespace]);
  }
  return {
    hasTemplate: (namespace, name) => (namespaced.get(name) ?? []).some((ns) => sameNamespace(ns, namespace)),
    hasClusterTemplate: (name) => cluster.has(name),
  };
}

function unreadableDocument(file: string, error: ParsedManifests['errors'][number]): ObjectValidation {
  const message = `${error.verdict}: ${error.reason}`;
  return {
    file,
    line: error.line,
    col: error.col,
    apiVersion: null,
    kind: null,
    name: null,
    namespace: null,
    valid: false,
    errors: [{ path: '', line: error.line, col: error.col, message }],
    warnings: [],
  };
}

function identityOf(obj: ManifestObject): DocumentIdentity {
  return {
    file: obj.file,
    line: obj.position.line,
    col: obj.position.col,
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.name ?? null,
  };
}

function skippedObject(obj: ManifestObject): SkippedDocument {
  return {
    ...identityOf(obj),
    reason: `kind ${obj.kind} (${obj.apiVersion}) is not validated by Rollgate`,
  };
}

// A document to report, in file order: either already judged unreadable, or an object to validate.
type PendingDocument =
  { documentIndex: number; unreadable: ObjectValidation } | { documentIndex: number; object: ManifestObject };

/**
 * Validates everything already parsed: each known object on its own, then across objects
 * (duplicates, analysis-template references, references to a kustomize-generated ConfigMap or Secret
 * by the name it was generated from). Unknown kinds and non-Kubernetes documents are skipped
 * with a note; unreadable YAML documents are reported as invalid entries with kind null. Objects are
 * reported in file order, then document order.
 */
export function validateParsedManifests(files: readonly ParsedManifests[]): ValidationReport {
  const report: ValidationReport = {
    objects: [],
    skipped: [],
    summary: { valid: 0, invalid: 0, skipped: 0 },
  };
  const pending: PendingDocument[] = [];
  const everyObject: ManifestObject[] = [];
  for (const parsed of files) {
    everyObject.push(...parsed.objects);
    const inFile: PendingDocument[] = parsed.errors.map((error) => ({
      documentIndex: error.documentIndex,
      unreadable: unreadableDocument(parsed.file, error),
    }));
    const skipped: SkippedDocument[] = parsed.skipped.map((doc) => ({
      file: parsed.file,
      line: doc.position.line,
      col: doc.position.col,
      apiVersion: null,
      kind: null,
      name: null,
      reason: doc.reason,
    }));
    for (const object of parsed.objects) {
      if (isValidatedKind(object)) inFile.push({ documentIndex: object.documentIndex, object });
      else skipped.push(skippedObject(object));
    }
    inFile.sort((a, b) => a.documentIndex - b.documentIndex);
    skipped.sort((a, b) => a.line - b.line);
    pending.push(...inFile);
    report.skipped.push(...skipped);
  }

  const objects = pending.flatMap((doc) => ('object' in doc ? [doc.object] : []));
  const context = { templates: templateLookup(objects), templateRefs: templateRefGraph(objects) };
  const firstSeen = new Map<string, ManifestObject>();
  const resultOf = new Map<ManifestObject, ObjectValidation>();
  for (const doc of pending) {
    if (!('object' in doc)) {
      report.objects.push(doc.unreadable);
      continue;
    }
    const obj = doc.object;
    const result = validateObject(obj, context);
    if (obj.name !== undefined) {
      const namespace = obj.kind === 'ClusterAnalysisTemplate' ? '' : (obj.namespace ?? '');
      const key = `${obj.kind}/${namespace}/${obj.name}`;
      const first = firstSeen.get(key);
      if (first === undefined) {
        firstSeen.set(key, obj);
      } else {
        const { line, col } = obj.lineOf(['metadata', 'name']);
        const shown = namespace === '' ? obj.name : `${namespace}/${obj.name}`;
        result.errors.push({
          path: 'metadata.name',
          line,
          col,
          message: `duplicate ${obj.kind} ${JSON.stringify(shown)}: first defined at ${first.file}:${first.position.line}`,
        });
        result.valid = false;
      }
    }
    resultOf.set(obj, result);
    report.objects.push(result);
  }
  // Across every object, ConfigMaps and Secrets included: a reference kustomize left unrewritten.
  for (const { object, issue } of checkGeneratedNameReferences(everyObject)) {
    const result = resultOf.get(object);
    if (result === undefined) continue;
    result.errors.push(issue);
    result.valid = false;
  }
  for (const object of report.objects) {
    if (object.valid) report.summary.valid += 1;
    else report.summary.invalid += 1;
  }
  report.summary.skipped = report.skipped.length;
  return report;
}

/** Parses and validates a set of YAML files (see {@link validateParsedManifests}). */
export function validateManifests(
  files: ReadonlyArray<{ file: string; text: string }>,
  options: ParseManifestsOptions = {},
): ValidationReport {
  return validateParsedManifests(files.map(({ file, text }) => parseManifests(text, file, options)));
}
