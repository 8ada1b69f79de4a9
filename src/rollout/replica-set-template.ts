// Whether a ReplicaSet runs a given pod template, whoever created it and however it hashed the template.
import type { ObservedReplicaSet } from './observed-state.ts';
import { canonicalJson, stripPodTemplateHashLabel } from './pod-template-hash.ts';
import { withPodTemplateDefaults } from './pod-template-defaults.ts';
import { POD_TEMPLATE_HASH_LABEL } from './rollout-action.ts';

/**
 * The annotation in which Argo Rollouts records the pod metadata it injected into a ReplicaSet's template
 * (strategy canaryMetadata / stableMetadata, previewMetadata / activeMetadata) as JSON
 * `{ labels?, annotations? }`: those keys belong to the phase of the ReplicaSet, not to its revision.
 */
export const EPHEMERAL_METADATA_ANNOTATION = 'rollout.argoproj.io/ephemeral-metadata';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keys of `recorded[field]` when `recorded` is the JSON of an object; none when it does not parse. */
function recordedKeys(recorded: string | undefined, field: 'labels' | 'annotations'): string[] {
  if (recorded === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(recorded);
    const keys = isObject(parsed) ? parsed[field] : undefined;
    return isObject(keys) ? Object.keys(keys) : [];
  } catch {
    // An annotation that is not JSON names nothing to remove; the templates then simply differ.
    return [];
  }
}

function without(map: unknown, keys: readonly string[]): unknown {
  if (!isObject(map) || keys.length === 0) return map;
  return Object.fromEntries(Object.entries(map).filter(([key]) => !keys.includes(key)));
}

/** A pod affinity term selecting pods by revision hash: the anti-affinity Argo injects against the stable pods. */
function isInjectedAntiAffinity(term: unknown): boolean {
  const inner = isObject(term) && isObject(term.podAffinityTerm) ? term.podAffinityTerm : term;
  const selector = isObject(inner) ? inner.labelSelector : undefined;
  const expressions = isObject(selector) ? selector.matchExpressions : undefined;
  return (
    Array.isArray(expressions) &&
    expressions.some((e) => isObject(e) && e.key === POD_TEMPLATE_HASH_LABEL && e.operator === 'In')
  );
}

function withoutInjectedAntiAffinity(spec: unknown): unknown {
  if (!isObject(spec) || !isObject(spec.affinity) || !isObject(spec.affinity.podAntiAffinity)) return spec;
  const anti = { ...spec.affinity.podAntiAffinity };
  for (const key of [
    'preferredDuringSchedulingIgnoredDuringExecution',
    'requiredDuringSchedulingIgnoredDuringExecution',
  ]) {
    const terms = anti[key];
    if (Array.isArray(terms)) anti[key] = terms.filter((term) => !isInjectedAntiAffinity(term));
  }
  return { ...spec, affinity: { ...spec.affinity, podAntiAffinity: anti } };
}

/**
 * The ReplicaSet's template as its revision: without the hash label, without the pod metadata Argo
 * Rollouts injected for the ReplicaSet's phase (as its ephemeral-metadata annotation records), and
 * without the anti-affinity term Argo injects against the stable revision's pods.
 */
function revisionTemplateOf(rs: ObservedReplicaSet): object {
  const template = stripPodTemplateHashLabel(rs.template) as JsonObject;
  const recorded = rs.annotations[EPHEMERAL_METADATA_ANNOTATION];
  const metadata = isObject(template.metadata) ? template.metadata : {};
  return {
    ...template,
    metadata: {
      ...metadata,
      labels: without(metadata.labels, recordedKeys(recorded, 'labels')),
      annotations: without(metadata.annotations, recordedKeys(recorded, 'annotations')),
    },
    spec: withoutInjectedAntiAffinity(template.spec),
  };
}

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;
const SUFFIX: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A resource quantity as one number, so `0.5` and `500m` (the server's spelling of it) are equal. */
function quantityValue(value: unknown): unknown {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string') return value;
  const match = QUANTITY.exec(text.trim());
  if (match === null) return value;
  const [, number = '0', exponent, suffix] = match;
  const scale = exponent !== undefined ? 10 ** Number(exponent) : suffix !== undefined ? SUFFIX[suffix] : 1;
  return Number(number) * (scale ?? 1);
}

function withQuantityValues(resources: unknown): unknown {
  if (!isObject(resources)) return resources;
  const out: JsonObject = { ...resources };
  for (const key of ['limits', 'requests'])
    if (isObject(resources[key]))
      out[key] = Object.fromEntries(
        Object.entries(resources[key]).map(([name, quantity]) => [name, quantityValue(quantity)]),
      );
  return out;
}

/**
 * The canonical JSON (pod-template-hash.ts) of `value` without what a stored object spells as empty where
 * a written one leaves it out (null, '', {}, [] and metadata.creationTimestamp, which a stored template
 * carries as null), resource quantities written as numbers; undefined when nothing is left. One walk that
 * writes the text as it goes: every pass compares its ReplicaSets' templates so, and a pruned copy made
 * first cost more than the comparison.
 */
function prunedCanonicalJson(value: unknown, key = ''): string | undefined {
  if (Array.isArray(value)) {
    let out = '';
    for (const item of value) {
      const text = prunedCanonicalJson(item);
      if (text !== undefined) out += (out === '' ? '' : ',') + text;
    }
    return out === '' ? undefined : `[${out}]`;
  }
  if (value instanceof Date) return undefined;
  if (isObject(value)) {
    const source = key === 'resources' ? (withQuantityValues(value) as JsonObject) : value;
    let out = '';
    // The default sort compares UTF-16 code units, as canonicalJson's does.
    for (const member of Object.keys(source).sort()) {
      if (key === 'metadata' && member === 'creationTimestamp') continue;
      const text = prunedCanonicalJson(source[member], member);
      if (text !== undefined) out += `${out === '' ? '' : ','}${JSON.stringify(member)}:${text}`;
    }
    return out === '' ? undefined : `{${out}}`;
  }
  if (value === null || value === '' || value === undefined) return undefined;
  return canonicalJson(value);
}

function comparable(template: object): string {
  return prunedCanonicalJson(withPodTemplateDefaults(template)) ?? '{}';
}

/**
 * True when `rs` runs `template`: their templates are equal once the hash label, what Argo Rollouts
 * injects for a phase, the API server's defaults and empty members are set aside. This is how a
 * ReplicaSet that another controller created for the same template (Argo Rollouts, with its own hash) is
 * recognised as the revision's, as Argo recognises its own when its hash function changed.
 */
export function runsTemplate(rs: ObservedReplicaSet, template: object): boolean {
  return comparable(revisionTemplateOf(rs)) === comparable(stripPodTemplateHashLabel(template));
}
