// How server-side apply treats each list and map (the +listType / +mapType markers of the built-in types).

/** A list's apply semantics: keyed items, a set of primitives, or one atomic value. */
export type ApplyListType =
  { kind: 'map'; keys: string[]; defaults: Record<string, unknown> } | { kind: 'set' } | { kind: 'atomic' };

const atomic: ApplyListType = { kind: 'atomic' };

function keyed(keys: string[], defaults: Record<string, unknown> = {}): ApplyListType {
  return { kind: 'map', keys, defaults };
}

const byName = keyed(['name']);

const builtInLists: Record<string, ApplyListType> = {
  containers: byName,
  initContainers: byName,
  ephemeralContainers: byName,
  env: byName,
  volumes: byName,
  imagePullSecrets: byName,
  schedulingGates: byName,
  resourceClaims: byName,
  volumeMounts: keyed(['mountPath']),
  volumeDevices: keyed(['devicePath']),
  conditions: keyed(['type']),
  hostAliases: keyed(['ip']),
  podIPs: keyed(['ip']),
  hostIPs: keyed(['ip']),
  topologySpreadConstraints: keyed(['topologyKey', 'whenUnsatisfiable']),
};

/**
 * The apply list type of the list at `schemaPath` (field names, `*` for a list item). Custom resources
 * only get ObjectMeta's (finalizers as a set, ownerReferences by uid); their own lists are atomic.
 */
export function applyListType(schemaPath: readonly string[], builtIn: boolean): ApplyListType {
  const name = schemaPath[schemaPath.length - 1] ?? '';
  if (schemaPath.length === 2 && schemaPath[0] === 'metadata') {
    if (name === 'finalizers') return { kind: 'set' };
    if (name === 'ownerReferences') return keyed(['uid']);
  }
  if (!builtIn) return atomic;
  if (name === 'ports') {
    return schemaPath[schemaPath.length - 2] === '*'
      ? keyed(['containerPort', 'protocol'], { protocol: 'TCP' })
      : keyed(['port', 'protocol'], { protocol: 'TCP' });
  }
  return builtInLists[name] ?? atomic;
}

const granularMaps = new Set([
  'labels',
  'annotations',
  'matchLabels',
  'nodeSelector',
  'limits',
  'requests',
  'data',
  'stringData',
  'binaryData',
]);

/** True for map-typed fields (map[string]X): the map itself is owned (`.` in fieldsV1), plus each key. */
export function isGranularMap(schemaPath: readonly string[]): boolean {
  return granularMaps.has(schemaPath[schemaPath.length - 1] ?? '');
}

/** Struct fields the built-in types mark atomic (`+structType=atomic` / `+mapType=atomic`): owned and replaced whole. */
export function isAtomicField(schemaPath: readonly string[], builtIn: boolean): boolean {
  return builtIn && schemaPath[schemaPath.length - 1] === 'selector';
}
