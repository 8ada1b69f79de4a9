// A source's health, looked at by its polls: the live objects of its inventory, one list per kind and
// namespace, each judged by the health rules (src/health), the worst of them stored in its status.
import { KubeForbiddenError } from '../kube/errors.ts';
import { healthOf, STATUSLESS_KINDS } from '../health/health-rules.ts';
import type { LiveObject, ObjectHealth } from '../health/object-health.ts';
import { aggregateHealth, type SourceHealth } from '../health/source-health.ts';
import type { LiveObjectReader } from './live-object-reader.ts';
import { POLL_STATE_MAX_AGE_MS, type SourceStateStore } from './source-sync.ts';
import { withHealth, type SourceStatus } from './source-status.ts';

/** Lists run at once by one source's check. */
const LIST_CONCURRENCY = 4;

/** The inventory keys grouped by what one list reads: `group/Kind/namespace` → the names. */
export function listsOf(
  inventory: readonly string[],
): Map<string, { group: string; kind: string; namespace: string; keys: string[] }> {
  const lists = new Map<string, { group: string; kind: string; namespace: string; keys: string[] }>();
  for (const key of inventory) {
    const [group = '', kind = '', namespace = ''] = key.split('/');
    const at = `${group}/${kind}/${namespace}`;
    const list = lists.get(at) ?? { group, kind, namespace, keys: [] };
    list.keys.push(key);
    lists.set(at, list);
  }
  return lists;
}

/**
 * Whether a poll looks at the health now: always while it is not Healthy or is older than the synced commit
 * (something is changing, and dependents wait on it), else once every `everyMs` (a healthy, idle source
 * costs a few lists that often, not every poll).
 */
export function healthCheckDue(
  status: SourceStatus | undefined,
  sinceLastMs: number | undefined,
  everyMs: number,
): boolean {
  if (status?.commit === undefined) return false;
  const health = status.health;
  if (health === undefined || health.status !== 'Healthy' || health.commit !== status.commit) return true;
  return sinceLastMs === undefined || sinceLastMs >= everyMs;
}

function nameOf(key: string): string {
  return key.split('/').slice(3).join('/');
}

const APPLIED: ObjectHealth = { status: 'Healthy', message: '' };

/** Each object's health by a GET: for a kind the process may read but not list (its RBAC says so). */
async function healthOfEach(
  reader: LiveObjectReader,
  list: { group: string; kind: string; namespace: string; keys: string[] },
): Promise<Array<{ key: string; health: ObjectHealth }>> {
  const entries: Array<{ key: string; health: ObjectHealth }> = [];
  for (const key of list.keys) {
    try {
      const live = await reader.get(list.group, list.kind, list.namespace || undefined, nameOf(key));
      entries.push({ key, health: healthOf(live) });
    } catch (err) {
      entries.push({ key, health: { status: 'Unknown', message: `cannot read: ${(err as Error).message}` } });
    }
  }
  return entries;
}

/**
 * Each key's health from one list (a kind without status is not read: applied is all it can say). A list
 * refused by RBAC falls back to a GET per object; any other failed list makes its objects Unknown (with
 * why), not the check.
 */
async function healthOfList(
  reader: LiveObjectReader,
  source: string,
  list: { group: string; kind: string; namespace: string; keys: string[] },
): Promise<Array<{ key: string; health: ObjectHealth }>> {
  if (STATUSLESS_KINDS.has(`${list.group}/${list.kind}`))
    return list.keys.map((key) => ({ key, health: APPLIED }));
  let live: LiveObject[] | undefined;
  try {
    live = await reader.list(list.group, list.kind, list.namespace || undefined, source);
  } catch (err) {
    if (err instanceof KubeForbiddenError) return healthOfEach(reader, list);
    const health: ObjectHealth = { status: 'Unknown', message: `cannot list: ${(err as Error).message}` };
    return list.keys.map((key) => ({ key, health }));
  }
  const byName = new Map<string, LiveObject>();
  for (const object of live ?? []) {
    const name = (object['metadata'] as { name?: unknown } | undefined)?.name;
    if (typeof name === 'string') byName.set(name, object);
  }
  return list.keys.map((key) => ({ key, health: healthOf(byName.get(nameOf(key))) }));
}

/** What one health check found, and the health stored before it (for a log line or an alert on a change). */
export interface HealthCheck {
  health: SourceHealth;
  previous: SourceHealth | undefined;
}

/**
 * Looks at the health of `source`'s objects and stores it in its status when it changed. Undefined (and
 * nothing written) while the source has not synced. Read errors of single lists are part of the answer;
 * a failed state read or write throws (the poll reports it).
 */
export async function checkSourceHealth(
  deps: { state: Pick<SourceStateStore, 'readSource' | 'updateStatus'>; reader: LiveObjectReader },
  source: string,
): Promise<HealthCheck | undefined> {
  // From the list the polls share: a sync that moved the source on since is caught at the write.
  const { status, inventory } = await deps.state.readSource(source, { maxAgeMs: POLL_STATE_MAX_AGE_MS });
  if (status?.commit === undefined) return undefined;
  const lists = [...listsOf(inventory ?? []).values()];
  const entries: Array<{ key: string; health: ObjectHealth }> = [];
  for (let i = 0; i < lists.length; i += LIST_CONCURRENCY) {
    const batch = lists.slice(i, i + LIST_CONCURRENCY);
    for (const result of await Promise.all(batch.map((list) => healthOfList(deps.reader, source, list))))
      entries.push(...result);
  }
  const health = aggregateHealth(entries, status.commit);
  // Unchanged (the usual answer for an idle source): not even the read before a write.
  if (withHealth(status, health) === undefined) return { health, previous: status.health };
  await deps.state.updateStatus(source, (last) =>
    // A sync that moved the source on meanwhile: this health is of the commit before, not worth writing.
    last?.commit === status.commit ? withHealth(last, health) : undefined,
  );
  return { health, previous: status.health };
}
