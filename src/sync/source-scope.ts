// What one source may write: its namespaces and kinds, and the pure decision on one object of its Git.
import { ARGO_API_VERSION, ROLLGATE_API_GROUP } from '../manifest/api-version.ts';

/**
 * A kind as the configuration names it: `Kind` (any group), `group/Kind`, or `*` (every kind). Argo's
 * group `argoproj.io` names the same kinds as `rollgate.dev`, since Rollouts are converted on apply.
 */
export type KindPattern = string;

/** How a source may treat a live object that no Rollgate source owns (see object-ownership.ts). */
export type AdoptPolicy = 'none' | 'unowned';

/** One source's scope, resolved from its configuration (see {@link sourceScopeOf}). */
export interface SourceScope {
  /** The source's own namespace: where an object that names none goes; always in scope. */
  ownNamespace: string;
  /** Every namespace it may write to (the own one included), or `*` for any. */
  namespaces: ReadonlySet<string> | '*';
  /** The cluster-scoped kinds it may write; none by default. */
  clusterScoped: readonly KindPattern[];
  /** When set, the only kinds it may write. */
  allowKinds?: readonly KindPattern[];
  /** Kinds it may never write (wins over every allow). */
  denyKinds: readonly KindPattern[];
  adopt: AdoptPolicy;
}

/**
 * Namespaced kinds refused unless `kinds.allow` names them (not by `*`): a RoleBinding inside the own
 * namespace can bind `cluster-admin` (or any ClusterRole) there to any subject, so Git would grant
 * rights the source's writers may not hold. Cluster-scoped RBAC is refused like every cluster-scoped kind.
 */
export const DEFAULT_DENIED_KINDS: readonly KindPattern[] = [
  'rbac.authorization.k8s.io/Role',
  'rbac.authorization.k8s.io/RoleBinding',
];

/** The part of a source's configuration the scope is made of (structural: sync does not import config). */
export interface SourceScopeSettings {
  namespace?: string;
  scope?: {
    namespaces?: readonly string[];
    clusterScoped?: readonly string[];
    kinds?: { allow?: readonly string[]; deny?: readonly string[] };
  };
  adopt?: AdoptPolicy;
}

/**
 * A source's scope. Its own namespace is its `namespace`, or the process's default namespace for a
 * source that sets none: a source without a namespace is confined to that one namespace like any other,
 * never given the whole cluster.
 */
export function sourceScopeOf(settings: SourceScopeSettings, defaultNamespace: string): SourceScope {
  const ownNamespace = settings.namespace ?? defaultNamespace;
  const listed = settings.scope?.namespaces ?? [];
  const allow = settings.scope?.kinds?.allow;
  return {
    ownNamespace,
    namespaces: listed.includes('*') ? '*' : new Set([ownNamespace, ...listed]),
    clusterScoped: [...(settings.scope?.clusterScoped ?? [])],
    ...(allow !== undefined ? { allowKinds: [...allow] } : {}),
    denyKinds: [...(settings.scope?.kinds?.deny ?? [])],
    adopt: settings.adopt ?? 'none',
  };
}

/** An object of Git as the scope decision sees it (apiVersion as written; Argo's is converted). */
export interface ScopedObject {
  apiVersion: string;
  kind: string;
  /** metadata.namespace as written in Git. */
  namespace?: string;
  name?: string;
}

/** The field a refusal is about, as the manifest spells it. */
export type ScopeField = 'kind' | 'metadata.namespace' | 'metadata.name';

export type ScopeDecision =
  /** `namespace`: where a namespaced object goes (absent for a cluster-scoped one). */
  { allowed: true; namespace?: string } | { allowed: false; field: ScopeField; message: string };

const groupOfApiVersion = (apiVersion: string): string => {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return apiVersion === ARGO_API_VERSION ? ROLLGATE_API_GROUP : group;
};

const ARGO_GROUP = ARGO_API_VERSION.slice(0, ARGO_API_VERSION.indexOf('/'));

/** Whether a pattern names the kind; `*` only when `wildcard` counts. */
function matches(pattern: KindPattern, group: string, kind: string, wildcard = true): boolean {
  if (pattern === '*') return wildcard;
  const slash = pattern.lastIndexOf('/');
  if (slash === -1) return pattern === kind;
  const patternGroup = pattern.slice(0, slash);
  const normalized = patternGroup === ARGO_GROUP ? ROLLGATE_API_GROUP : patternGroup;
  return pattern.slice(slash + 1) === kind && normalized === group;
}

const kindName = (group: string, kind: string): string => (group === '' ? kind : `${group}/${kind}`);

/**
 * Why the kind is refused whatever its namespace, or undefined when the kind may be written: in
 * `kinds.deny`, absent from `kinds.allow` when that is set, or denied by default
 * ({@link DEFAULT_DENIED_KINDS}) without `kinds.allow` naming it. Needs no discovery, so a refused kind
 * is refused even when the cluster does not serve it.
 */
export function refusedKind(
  scope: SourceScope,
  object: Pick<ScopedObject, 'apiVersion' | 'kind'>,
): string | undefined {
  const group = groupOfApiVersion(object.apiVersion);
  const { kind } = object;
  const name = kindName(group, kind);
  if (scope.denyKinds.some((p) => matches(p, group, kind)))
    return `${name} is denied to this source (scope.kinds.deny)`;
  if (scope.allowKinds !== undefined && !scope.allowKinds.some((p) => matches(p, group, kind)))
    return `${name} is not among the kinds this source may write (scope.kinds.allow)`;
  const byDefault = DEFAULT_DENIED_KINDS.some((p) => matches(p, group, kind));
  if (byDefault && !(scope.allowKinds ?? []).some((p) => matches(p, group, kind, false)))
    return `${name} is refused by default (it grants rights inside the namespace); name it in scope.kinds.allow to let this source write it`;
  return undefined;
}

const inScope = (scope: SourceScope, namespace: string): boolean =>
  scope.namespaces === '*' || scope.namespaces.has(namespace);

const describeNamespaces = (scope: SourceScope): string =>
  scope.namespaces === '*' ? 'any' : [...scope.namespaces].join(', ');

/**
 * Whether the source may write `object`, and where a namespaced one goes. `namespaced` is the cluster's
 * answer (API discovery) for the object's kind: Git's own `metadata.namespace` never decides that. A
 * namespaced object goes to its `metadata.namespace`, or the own namespace when it names none, and only
 * into a namespace of the scope; a cluster-scoped one only when `clusterScoped` names its kind, and a
 * Namespace only when its name is a namespace of the scope (so a source cannot create, or rewrite the
 * Pod Security labels of, anyone else's namespace).
 */
export function decideScope(scope: SourceScope, object: ScopedObject, namespaced: boolean): ScopeDecision {
  const kindRefusal = refusedKind(scope, object);
  if (kindRefusal !== undefined) return { allowed: false, field: 'kind', message: kindRefusal };
  const group = groupOfApiVersion(object.apiVersion);
  if (namespaced) {
    const namespace = object.namespace ?? scope.ownNamespace;
    if (!inScope(scope, namespace))
      return {
        allowed: false,
        field: 'metadata.namespace',
        message: `namespace "${namespace}" is outside this source's scope (namespaces: ${describeNamespaces(scope)}); add it to scope.namespaces to allow it`,
      };
    return { allowed: true, namespace };
  }
  if (!scope.clusterScoped.some((p) => matches(p, group, object.kind)))
    return {
      allowed: false,
      field: 'kind',
      message: `${kindName(group, object.kind)} is cluster-scoped and this source may write no cluster-scoped kind but those in scope.clusterScoped (${scope.clusterScoped.join(', ') || 'none'})`,
    };
  if (
    group === '' &&
    object.kind === 'Namespace' &&
    object.name !== undefined &&
    !inScope(scope, object.name)
  )
    return {
      allowed: false,
      field: 'metadata.name',
      message: `Namespace "${object.name}" is not one of this source's namespaces (${describeNamespaces(scope)})`,
    };
  return { allowed: true };
}
