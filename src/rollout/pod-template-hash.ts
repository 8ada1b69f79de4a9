// A stable, short hash of a pod template: names ReplicaSets and labels their pods, like Argo's.
import { POD_TEMPLATE_HASH_LABEL } from './rollout-action.ts';

// Letters and digits that cannot spell words and are valid in names and label values.
const ALPHABET = 'bcdfghjkmnpqrstvwxz2456789';

/**
 * JSON with object keys sorted at every level and undefined members dropped, so equal objects hash equal.
 * Built by concatenation, without the arrays of entries a map/filter/join would allocate: every pass
 * hashes its Rollout's pod template through it.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    return value === undefined ? 'null' : JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  // The default sort compares UTF-16 code units, as `a < b` does.
  const keys = Object.keys(record).sort();
  let out = '{';
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${out}}`;
}

/** 32-bit FNV-1a over the UTF-16 code units of `text` (each unit fed as two bytes). */
function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    hash ^= unit & 0xff;
    hash = Math.imul(hash, 0x01000193);
    hash ^= unit >>> 8;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The template without the hash label, so a stored ReplicaSet template hashes like the spec it came from. */
export function stripPodTemplateHashLabel(template: object): object {
  const metadata = (template as { metadata?: { labels?: Record<string, string> } }).metadata;
  const labels = metadata?.labels;
  if (labels === undefined || !(POD_TEMPLATE_HASH_LABEL in labels)) return template;
  const { [POD_TEMPLATE_HASH_LABEL]: _dropped, ...rest } = labels;
  return { ...template, metadata: { ...metadata, labels: rest } };
}

/**
 * The pod-template hash: FNV-1a over the canonical JSON of the template (hash label removed), mixed with
 * `collisionCount` when it is set, written in a 26-letter alphabet (at most 7 characters).
 */
export function podTemplateHash(template: object, collisionCount?: number): string {
  const input =
    canonicalJson(stripPodTemplateHashLabel(template)) + (collisionCount ? `#${collisionCount}` : '');
  let n = fnv1a32(input);
  let out = '';
  do {
    out += ALPHABET[n % ALPHABET.length];
    n = Math.floor(n / ALPHABET.length);
  } while (n > 0);
  return out;
}
