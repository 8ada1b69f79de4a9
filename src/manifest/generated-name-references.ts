// The check that a Rollout or analysis template names a generated ConfigMap/Secret by the name kustomize generated it from.
import type { ManifestObject } from './manifest.ts';
import {
  ANALYSIS_TEMPLATE,
  CLUSTER_ANALYSIS_TEMPLATE,
  CONFIG_MAP,
  REFERENCE_FIELDS,
  ROLLOUT,
  SECRET,
  isKind,
  namesAt,
} from './object-references.ts';
import type { GroupedKind } from './object-references.ts';
import { formatFieldPath } from './field-path.ts';
import type { ValidationIssue } from './validation-issue.ts';

/**
 * What kustomize appends to a generated name: "-" and 10 characters of a hash written in the 16
 * letters and digits it uses (hex with 0, 1, 3, a and e replaced by g, h, k, m and t, so the suffix
 * spells no word).
 */
const GENERATED_NAME = /^(.+)-([245-9bcdfghkmt]{10})$/;

/** The objects the check reads references from: the kinds `rollgate validate` reports. */
const REFERRERS: readonly GroupedKind[] = [ROLLOUT, ANALYSIS_TEMPLATE, CLUSTER_ANALYSIS_TEMPLATE];
const GENERATED_KINDS: readonly GroupedKind[] = [CONFIG_MAP, SECRET];

/** A reference the check flags, on the object that writes it. */
export interface GeneratedNameReferenceIssue {
  object: ManifestObject;
  issue: ValidationIssue;
}

interface NamedObject {
  name: string;
  namespace: string | undefined;
}

// An unset namespace is the one the object will be applied to: it matches any (as validate does).
function sameNamespace(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || a === b;
}

/**
 * The generated name that `reference` was most likely meant to become: one whose name before the hash
 * is the reference itself, or the reference with the prefix and suffix the referrer's own name carries
 * (kustomize gives every object of a build the same namePrefix and nameSuffix, and puts the suffix
 * before the hash).
 */
function generatedFrom(
  reference: string,
  referrerName: string,
  generated: readonly NamedObject[],
): NamedObject | undefined {
  return generated.find(({ name }) => {
    const stem = GENERATED_NAME.exec(name)?.[1];
    if (stem === undefined) return false;
    for (let at = stem.indexOf(reference); at >= 0; at = stem.indexOf(reference, at + 1)) {
      const prefix = stem.slice(0, at);
      const suffix = stem.slice(at + reference.length);
      if (
        referrerName.length >= prefix.length + suffix.length &&
        referrerName.startsWith(prefix) &&
        referrerName.endsWith(suffix)
      )
        return true;
    }
    return false;
  });
}

/**
 * Flags every reference from a Rollout, AnalysisTemplate or ClusterAnalysisTemplate to a ConfigMap or
 * Secret that is not among `objects` while a kustomize-generated one (`<name>-<hash>`, possibly with
 * the build's prefix and suffix) is: kustomize rewrote the generated object's name but not this field.
 * Pure: `objects` are one rendered app or one directory's files, as parsed.
 */
export function checkGeneratedNameReferences(
  objects: readonly ManifestObject[],
): GeneratedNameReferenceIssue[] {
  const issues: GeneratedNameReferenceIssue[] = [];
  const named = (kind: GroupedKind): NamedObject[] =>
    objects.flatMap((obj) =>
      isKind(obj, kind) && obj.name !== undefined ? [{ name: obj.name, namespace: obj.namespace }] : [],
    );
  const byKind = new Map(GENERATED_KINDS.map((kind) => [kind.kind, named(kind)]));
  for (const object of objects) {
    if (object.name === undefined || !REFERRERS.some((kind) => isKind(object, kind))) continue;
    for (const field of REFERENCE_FIELDS) {
      if (!isKind(object, field.referrer)) continue;
      const candidates = byKind.get(field.target.kind);
      if (candidates === undefined) continue;
      const inScope = candidates.filter((candidate) => sameNamespace(candidate.namespace, object.namespace));
      for (const reference of namesAt(object.value, field.path)) {
        if (inScope.some((candidate) => candidate.name === reference.name)) continue;
        const generated = generatedFrom(reference.name, object.name, inScope);
        if (generated === undefined) continue;
        const { line, col } = object.lineOf(reference.path);
        issues.push({
          object,
          issue: {
            path: formatFieldPath(reference.path),
            line,
            col,
            message:
              `names ${field.target.kind} ${JSON.stringify(reference.name)}, which is not among the objects, ` +
              `while ${JSON.stringify(generated.name)}, the name kustomize generated for it, is: kustomize did ` +
              `not rewrite this reference, usually because it does not know this field of a ${object.kind} ` +
              `(Rollgate's kustomize rendering teaches it; see docs/sources.md, "References in rendered kustomizations")`,
          },
        });
      }
    }
  }
  return issues;
}
