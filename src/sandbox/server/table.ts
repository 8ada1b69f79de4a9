// `kubectl get` output: server-side Tables (Accept: application/json;as=Table) with the columns kubectl shows.
import type { ResourceType } from '../resources/resource-type.ts';
import { typeKeyOf, type StoredObject } from '../store/object-store.ts';

interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
  cell(obj: StoredObject, now: Date): unknown;
}

function rec(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Go's duration.HumanDuration, which kubectl prints as AGE. */
export function humanDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

function age(obj: StoredObject, now: Date): string {
  const created = Date.parse(obj.metadata.creationTimestamp ?? '');
  return Number.isNaN(created) ? '<unknown>' : humanDuration(now.getTime() - created);
}

const nameColumn: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
  cell: (o) => o.metadata.name ?? '',
};

const ageColumn: Column = {
  name: 'Age',
  type: 'string',
  format: '',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  cell: age,
};

function col(name: string, cell: Column['cell'], type = 'string', priority = 0): Column {
  return { name, type, format: '', description: name, priority, cell };
}

/** What `kubectl get pods` shows as STATUS: the waiting/terminated reason when there is one, else the phase. */
export function podStatusReason(pod: StoredObject): string {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  const status = rec(pod.status);
  let reason = typeof status.phase === 'string' ? status.phase : 'Pending';
  if (typeof status.reason === 'string') reason = status.reason;
  for (const cs of arr(status.containerStatuses)) {
    const state = rec(rec(cs).state);
    const waiting = rec(state.waiting);
    const terminated = rec(state.terminated);
    if (typeof waiting.reason === 'string' && waiting.reason !== '') reason = waiting.reason;
    else if (typeof terminated.reason === 'string' && terminated.reason !== '') reason = terminated.reason;
  }
  return reason;
}

function podColumns(): Column[] {
  return [
    nameColumn,
    col('Ready', (o) => {
      const statuses = arr(rec(o.status).containerStatuses);
      const ready = statuses.filter((s) => rec(s).ready === true).length;
      return `${ready}/${arr(rec(o.spec).containers).length}`;
    }),
    col('Status', podStatusReason),
    col(
      'Restarts',
      (o) =>
        arr(rec(o.status).containerStatuses).reduce<number>(
          (n, s) => n + Number(rec(s).restartCount ?? 0),
          0,
        ),
      'string',
    ),
    ageColumn,
    col('IP', (o) => rec(o.status).podIP ?? '<none>', 'string', 1),
    col('Node', (o) => rec(o.spec).nodeName ?? '<none>', 'string', 1),
  ];
}

/** One step of a printer column's JSONPath: a field, an index, every item, or a `[?(@.key=="value")]` filter. */
type PathStep =
  { field: string } | { index: number } | { all: true } | { filter: { key: string; value: string } };

const FILTER = /^\?\(@\.([A-Za-z0-9_-]+)\s*==\s*(?:"([^"]*)"|'([^']*)')\)$/;

/** Parses the JSONPath subset CRD printer columns use (`.status.conditions[?(@.type=="Ready")].status`). */
function parsePrinterPath(path: string): PathStep[] | undefined {
  const steps: PathStep[] = [];
  const text = path.trim().replace(/^\{(.*)\}$/, '$1');
  let i = 0;
  while (i < text.length) {
    if (text[i] === '.') {
      const match = /^[A-Za-z0-9_$-]+/.exec(text.slice(i + 1));
      if (!match) return undefined;
      steps.push({ field: match[0] });
      i += 1 + match[0].length;
    } else if (text[i] === '[') {
      const end = text.indexOf(']', i);
      if (end < 0) return undefined;
      const inner = text.slice(i + 1, end).trim();
      const filter = FILTER.exec(inner);
      if (inner === '*') steps.push({ all: true });
      else if (/^\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else if (filter) steps.push({ filter: { key: filter[1] ?? '', value: filter[2] ?? filter[3] ?? '' } });
      else return undefined;
      i = end + 1;
    } else return undefined;
  }
  return steps;
}

/** The first value a printer column's path finds, as the API server's table convertor takes it. */
function firstAt(value: unknown, steps: PathStep[]): unknown {
  let found: unknown[] = [value];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const cur of found) {
      if ('field' in step) {
        const v = rec(cur)[step.field];
        if (v !== undefined) next.push(v);
      } else if ('index' in step) {
        if (Array.isArray(cur) && cur[step.index] !== undefined) next.push(cur[step.index]);
      } else if ('all' in step) {
        if (Array.isArray(cur)) next.push(...(cur as unknown[]));
      } else if (Array.isArray(cur)) {
        const { key, value: wanted } = step.filter;
        next.push(...(cur as unknown[]).filter((item) => String(rec(item)[key]) === wanted));
      }
    }
    found = next;
  }
  return found[0];
}

function jsonPathCell(path: string): Column['cell'] {
  const steps = parsePrinterPath(path);
  return (o) => {
    if (!steps) return null;
    const cur = firstAt(o, steps);
    if (cur === undefined || cur === null) return null;
    return typeof cur === 'object' ? JSON.stringify(cur) : cur;
  };
}

function columnsFor(type: ResourceType): Column[] {
  if (type.crdName !== undefined) {
    if (type.printerColumns.length === 0) return [nameColumn, ageColumn];
    return [
      nameColumn,
      ...type.printerColumns.map((c) => {
        const isAge = c.type === 'date';
        return {
          name: c.name,
          type: isAge ? 'string' : c.type,
          format: '',
          description: c.description ?? '',
          priority: c.priority ?? 0,
          cell: isAge
            ? (o: StoredObject, now: Date) => {
                const v = jsonPathCell(c.jsonPath)(o, now);
                const t = typeof v === 'string' ? Date.parse(v) : NaN;
                return Number.isNaN(t) ? '<unknown>' : humanDuration(now.getTime() - t);
              }
            : jsonPathCell(c.jsonPath),
        };
      }),
    ];
  }
  const spec = (o: StoredObject): Record<string, unknown> => rec(o.spec);
  const status = (o: StoredObject): Record<string, unknown> => rec(o.status);
  switch (typeKeyOf(type)) {
    case '/Pod':
      return podColumns();
    case 'apps/ReplicaSet':
      return [
        nameColumn,
        col('Desired', (o) => spec(o).replicas ?? 1, 'integer'),
        col('Current', (o) => status(o).replicas ?? 0, 'integer'),
        col('Ready', (o) => status(o).readyReplicas ?? 0, 'integer'),
        ageColumn,
      ];
    case 'apps/Deployment':
      return [
        nameColumn,
        col('Ready', (o) => `${Number(status(o).readyReplicas ?? 0)}/${Number(spec(o).replicas ?? 1)}`),
        col('Up-to-date', (o) => status(o).updatedReplicas ?? 0, 'integer'),
        col('Available', (o) => status(o).availableReplicas ?? 0, 'integer'),
        ageColumn,
      ];
    case 'batch/Job':
      return [
        nameColumn,
        col('Status', (o) => {
          const conds = arr(status(o).conditions).map(rec);
          if (conds.some((c) => c.type === 'Complete' && c.status === 'True')) return 'Complete';
          if (conds.some((c) => c.type === 'Failed' && c.status === 'True')) return 'Failed';
          return 'Running';
        }),
        col('Completions', (o) => `${Number(status(o).succeeded ?? 0)}/${Number(spec(o).completions ?? 1)}`),
        ageColumn,
      ];
    case '/Service':
      return [
        nameColumn,
        col('Type', (o) => spec(o).type ?? 'ClusterIP'),
        col('Cluster-IP', (o) => spec(o).clusterIP ?? '<none>'),
        col(
          'Port(s)',
          (o) =>
            arr(spec(o).ports)
              .map((p) => `${String(rec(p).port)}/${String(rec(p).protocol ?? 'TCP')}`)
              .join(',') || '<none>',
        ),
        ageColumn,
      ];
    case '/Namespace':
      return [nameColumn, col('Status', (o) => status(o).phase ?? 'Active'), ageColumn];
    case '/ConfigMap':
      return [
        nameColumn,
        col(
          'Data',
          (o) => Object.keys(rec(o.data)).length + Object.keys(rec(o.binaryData)).length,
          'integer',
        ),
        ageColumn,
      ];
    case '/Secret':
      return [
        nameColumn,
        col('Type', (o) => o.type ?? 'Opaque'),
        col('Data', (o) => Object.keys(rec(o.data)).length, 'integer'),
        ageColumn,
      ];
    case 'policy/PodDisruptionBudget':
      return [
        nameColumn,
        col('Min Available', (o) => spec(o).minAvailable ?? 'N/A'),
        col('Max Unavailable', (o) => spec(o).maxUnavailable ?? 'N/A'),
        col('Allowed Disruptions', (o) => status(o).disruptionsAllowed ?? 0, 'integer'),
        ageColumn,
      ];
    case 'apiextensions.k8s.io/CustomResourceDefinition':
      return [nameColumn, col('Created At', (o) => o.metadata.creationTimestamp ?? '', 'date')];
    default:
      return [nameColumn, ageColumn];
  }
}

/** Which object a Table row carries, per `?includeObject=` (kubectl asks for Object when it needs it). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

function rowObject(obj: StoredObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/** A meta.k8s.io/v1 Table of the objects. */
export function buildTable(
  type: ResourceType,
  objects: StoredObject[],
  now: Date,
  include: IncludeObject,
  listMeta: Record<string, unknown> = {},
): Record<string, unknown> {
  const columns = columnsFor(type);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format,
      description: c.description,
      priority: c.priority,
    })),
    rows: objects.map((o) => {
      const row: Record<string, unknown> = { cells: columns.map((c) => c.cell(o, now) ?? null) };
      const object = rowObject(o, include);
      if (object !== undefined) row.object = object;
      return row;
    }),
  };
}
