// The ConfigMap that holds one source's state: its deterministic name, its labels, and the old shared layout it replaces.
import { createHash } from 'node:crypto';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './sync-labels.ts';

/**
 * On every source-state ConfigMap (value: the source's name, or its DNS-safe form), so one list with the
 * selector `rollgate.dev/source-state` reads the state of every source. Not `rollgate.dev/source`: that
 * label marks objects a sync applied, which its prune may delete.
 */
export const SOURCE_STATE_LABEL = 'rollgate.dev/source-state';
/** The source's configured name, exactly (the label value is shortened when the name is not a DNS label). */
export const SOURCE_NAME_ANNOTATION = 'rollgate.dev/source-name';
/** The prefix of every source-state ConfigMap's name. */
export const SOURCE_STATE_PREFIX = 'rollgate-source-';
/**
 * Earlier versions kept one ConfigMap that held every source's state as `<source>.commit` and `<source>.status` keys;
 * the store carries it over to the per-source objects and deletes it (see ConfigMapSourceStateStore).
 */
export const LEGACY_SOURCE_STATE_CONFIGMAP = 'rollgate-sources';

/** The keys of a source-state ConfigMap's data. */
export const COMMIT_KEY = 'commit';
export const STATUS_KEY = 'status';
/** The objects the source applied (see source-inventory.ts): what its prune may delete. */
export const INVENTORY_KEY = 'inventory';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** 63 (a label value) less the 11 characters of `-` and a 10-character digest. */
const SLUG_MAX = 52;

/**
 * The label value (and name suffix) for a source: the name itself when it is a DNS label, as the
 * configuration requires; otherwise a lowercase slug with a digest of the exact name, so two names never
 * share an object.
 */
export function sourceStateKey(source: string): string {
  if (source.length <= 63 && DNS_LABEL.test(source)) return source;
  const slug = source
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  const digest = createHash('sha256').update(source).digest('hex').slice(0, 10);
  return slug === '' ? `x-${digest}` : `${slug}-${digest}`;
}

/** The name of a source's state ConfigMap: `rollgate-source-<name>`. */
export function sourceStateName(source: string): string {
  return `${SOURCE_STATE_PREFIX}${sourceStateKey(source)}`;
}

/** A new state ConfigMap for `source` holding `data`. */
export function sourceStateConfigMap(
  namespace: string,
  source: string,
  data: Record<string, string>,
): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: sourceStateName(source),
      namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [SOURCE_STATE_LABEL]: sourceStateKey(source) },
      annotations: { [SOURCE_NAME_ANNOTATION]: source },
    },
    data,
  };
}

/** Which source a listed state ConfigMap belongs to; undefined for one that is not a source's state. */
export function sourceOfStateConfigMap(cm: V1ConfigMap): string | undefined {
  return cm.metadata?.annotations?.[SOURCE_NAME_ANNOTATION] ?? cm.metadata?.labels?.[SOURCE_STATE_LABEL];
}

/**
 * The per-source data held in the old shared ConfigMap (`<source>.commit`, `<source>.status`), as the
 * data each source's own ConfigMap gets. The status is carried as written, unparsed: nothing is lost,
 * even a status a newer version wrote.
 */
export function legacySourceStates(
  data: Readonly<Record<string, string>> | undefined,
): Map<string, Record<string, string>> {
  const states = new Map<string, Record<string, string>>();
  for (const [key, value] of Object.entries(data ?? {})) {
    const match = /^(.+)\.(commit|status)$/.exec(key);
    if (!match) continue;
    const [, source, field] = match as unknown as [string, string, 'commit' | 'status'];
    states.set(source, {
      ...states.get(source),
      [field === 'commit' ? COMMIT_KEY : STATUS_KEY]: value,
    });
  }
  return states;
}
