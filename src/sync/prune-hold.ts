// The prune hold: a ConfigMap or Secret that left Git is not deleted while a ReplicaSet with pods still uses it.
import { podTemplateReferences } from './pod-template-references.ts';
import { inventoryKey } from './source-inventory.ts';
import type { HeldPrune, SourceStatus } from './source-status.ts';

/**
 * A ReplicaSet as the hold sees it: one that has pods or is meant to, and the ConfigMaps and Secrets its
 * pod template names. A config change renders a new name (kustomize's hash suffix, or a user's `-v2`),
 * the Rollout's template moves to it, and the old one leaves Git; while the stable ReplicaSet of the
 * canary still runs pods that mount the old one, deleting it breaks every such pod that restarts, and
 * every pod an abort scales the stable ReplicaSet back up to.
 */
export interface ReplicaSetUse {
  namespace: string;
  name: string;
  /** `spec.replicas`: the pods it is meant to have (an aborted canary's stable one comes back up). */
  replicas: number;
  /** `status.replicas`: the pods it still has (a scale-down takes a moment; a terminating pod still runs). */
  pods: number;
  configMaps: readonly string[];
  secrets: readonly string[];
}

/** What the shell read of the ReplicaSets in the namespaces concerned, or why it could not. */
export type ObservedUses = { replicaSets: readonly ReplicaSetUse[] } | { failed: string };

/** An object whose prune may be held: a core ConfigMap or Secret, its namespace resolved. */
export interface HoldTarget {
  /** Its inventory key. */
  key: string;
  kind: HeldPrune['kind'];
  namespace: string;
  name: string;
}

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

const count = (value: unknown, absent: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : absent;

/**
 * A listed ReplicaSet as a use, or undefined when it uses nothing a hold cares about: no pods and none
 * wanted (`spec.replicas` 0 and `status.replicas` 0), or a pod template naming no ConfigMap or Secret.
 * An absent `spec.replicas` is 1, as the API server defaults it.
 */
export function replicaSetUseOf(replicaSet: unknown): ReplicaSetUse | undefined {
  const metadata = record(record(replicaSet).metadata);
  const spec = record(record(replicaSet).spec);
  const replicas = count(spec.replicas, 1);
  const pods = count(record(record(replicaSet).status).replicas, 0);
  if (replicas <= 0 && pods <= 0) return undefined;
  if (typeof metadata.name !== 'string' || typeof metadata.namespace !== 'string') return undefined;
  const { configMaps, secrets } = podTemplateReferences(spec.template);
  if (configMaps.length === 0 && secrets.length === 0) return undefined;
  return { namespace: metadata.namespace, name: metadata.name, replicas, pods, configMaps, secrets };
}

/**
 * The object as a hold target when it is a core (`v1`) ConfigMap or Secret with a name; anything else
 * is pruned as it always was. Both kinds are namespaced: no namespace in Git means the source's own.
 */
export function holdTargetOf(
  object: { apiVersion: string; kind: string; namespace?: string; name?: string },
  defaultNamespace: string,
): HoldTarget | undefined {
  const { apiVersion, kind, name } = object;
  if (apiVersion !== 'v1' || (kind !== 'ConfigMap' && kind !== 'Secret') || name === undefined)
    return undefined;
  const namespace = object.namespace ?? defaultNamespace;
  return { key: inventoryKey({ apiVersion, kind, namespace, name }), kind, namespace, name };
}

/** The namespaces whose ReplicaSets a decision about `targets` needs, sorted, each once. */
export function namespacesOf(targets: Iterable<{ namespace: string }>): string[] {
  return [...new Set([...targets].map((t) => t.namespace))].sort();
}

/** The ReplicaSets (with pods, or wanting them) in the target's namespace whose pod template names it. */
export function holdersOf(
  target: Omit<HoldTarget, 'key'>,
  replicaSets: readonly ReplicaSetUse[],
): ReplicaSetUse[] {
  return replicaSets
    .filter(
      (rs) =>
        rs.namespace === target.namespace &&
        (rs.replicas > 0 || rs.pods > 0) &&
        (target.kind === 'ConfigMap' ? rs.configMaps : rs.secrets).includes(target.name),
    )
    .sort((a, b) => a.name.localeCompare(b.name));
}

const counted = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
const podsOf = (rs: ReplicaSetUse): string =>
  rs.pods === rs.replicas
    ? counted(rs.replicas, 'replica')
    : `${counted(rs.replicas, 'replica')}, ${counted(rs.pods, 'pod')}`;

/**
 * Whether the prune of `target` is held, and the record that says so: held while any ReplicaSet uses it,
 * and when the ReplicaSets could not be read (deleting what may be in use is the one step that cannot be
 * undone; the next poll looks again). Undefined: nothing uses it, prune it now. `since` is kept from an
 * earlier hold of the same object.
 */
export function holdOf(
  target: Omit<HoldTarget, 'key'> & { key: string },
  observed: ObservedUses,
  where: { file: string; line: number; since: string },
): HeldPrune | undefined {
  const base = {
    key: target.key,
    kind: target.kind,
    namespace: target.namespace,
    name: target.name,
    file: where.file,
    line: where.line,
    since: where.since,
  };
  if ('failed' in observed)
    return {
      ...base,
      usedBy: [],
      reason: `the ReplicaSets of namespace ${target.namespace} could not be read (${observed.failed}); looked at again on the next poll`,
    };
  const holders = holdersOf(target, observed.replicaSets);
  if (holders.length === 0) return undefined;
  return {
    ...base,
    usedBy: holders.map((rs) => rs.name),
    reason: `in use by ${holders.map((rs) => `ReplicaSet ${rs.namespace}/${rs.name} (${podsOf(rs)})`).join(', ')}`,
  };
}

/** What a look at the held prunes decided: which to delete now, which stay held, which are dropped. */
export interface HeldPruneDecision {
  prune: HeldPrune[];
  /** Still in use: the record with the ReplicaSets seen now (its `since` kept). */
  held: HeldPrune[];
  /** Back in Git, or no longer the source's (not in its inventory): nothing to delete. */
  dropped: HeldPrune[];
}

/**
 * The held prunes looked at again (every poll that finds no new commit, and every sync): an object that
 * is back in Git (`present`, inventory keys of the commit's ConfigMaps and Secrets) or no longer in the
 * source's inventory is dropped; one nothing uses any more is pruned; the others stay held.
 */
export function decideHeldPrunes(
  pending: readonly HeldPrune[],
  given: { inventory: ReadonlySet<string>; present?: ReadonlySet<string>; observed: ObservedUses },
): HeldPruneDecision {
  const decision: HeldPruneDecision = { prune: [], held: [], dropped: [] };
  for (const entry of pending) {
    if (given.present?.has(entry.key) || !given.inventory.has(entry.key)) {
      decision.dropped.push(entry);
      continue;
    }
    const held = holdOf(entry, given.observed, entry);
    if (held) decision.held.push(held);
    else decision.prune.push(entry);
  }
  return decision;
}

/**
 * The status after a poll's look at the held prunes, from the status as stored now (a sync in another
 * process may have written it since the look began): the entries `settled` (deleted, gone, dropped) leave,
 * the ones still `held` take the ReplicaSets seen now, and entries the look did not know are kept as they
 * are. Undefined when nothing changes (no write).
 */
export function statusAfterHeldPrunes(
  last: SourceStatus | undefined,
  outcome: { settled: ReadonlySet<string>; held: readonly HeldPrune[] },
): SourceStatus | undefined {
  if (last?.pendingPrune === undefined) return undefined;
  const seen = new Map(outcome.held.map((h) => [h.key, h]));
  const next = last.pendingPrune
    .filter((entry) => !outcome.settled.has(entry.key))
    .map((entry) => seen.get(entry.key) ?? entry);
  if (JSON.stringify(next) === JSON.stringify(last.pendingPrune)) return undefined;
  const { pendingPrune: _pendingPrune, ...rest } = last;
  return next.length > 0 ? { ...rest, pendingPrune: next } : rest;
}
