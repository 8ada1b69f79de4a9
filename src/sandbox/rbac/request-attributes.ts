// What an HTTP request asks for, in the terms RBAC rules are written in (kube-apiserver's RequestInfo).

/** Who sent a request, as the authenticator found them. */
export interface RequestUser {
  /** `system:serviceaccount:<namespace>:<name>`, or the admin's name. */
  name: string;
  groups: string[];
  /** The sandbox's own kubeconfig token: never authorized, as a cluster-admin client is not refused. */
  admin: boolean;
}

/** A request on a resource: `verb` as RBAC names it (get, list, watch, create, update, patch, delete, deletecollection). */
export interface ResourceAttributes {
  kind: 'resource';
  verb: string;
  group: string;
  version: string;
  resource: string;
  /** `status`, `scale`, `eviction`, `token`, `finalize`; empty for the resource itself. */
  subresource: string;
  /** Empty for a cluster-scoped resource or a list across all namespaces. */
  namespace: string;
  /** Empty for collections (and for a create, whose name is in the body). */
  name: string;
}

/** A request on any other path (discovery, /version, /healthz, /openapi/v3, the sandbox's admin endpoints). */
export interface NonResourceAttributes {
  kind: 'nonResource';
  /** The HTTP method in lower case, as kube-apiserver authorizes non-resource URLs. */
  verb: string;
  path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

/** The route the API server resolved for a resource request. */
export interface ResolvedResource {
  group: string;
  version: string;
  plural: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

/**
 * The verb of a resource request, as kube-apiserver's RequestInfo derives it: a GET without a name is a
 * list, or a watch with `watch=true`; a DELETE without a name is a deletecollection.
 */
export function resourceVerb(method: string, url: URL, named: boolean): string {
  const watch = url.searchParams.get('watch');
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch === 'true' || watch === '1') return 'watch';
      return named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

/** The attributes of a request on a resource the registry serves. */
export function resourceAttributes(method: string, url: URL, route: ResolvedResource): ResourceAttributes {
  const name = route.name ?? fieldSelectedName(url) ?? '';
  return {
    kind: 'resource',
    verb: resourceVerb(method, url, route.name !== undefined),
    group: route.group,
    version: route.version,
    resource: route.plural,
    subresource: route.subresource ?? '',
    // kube-apiserver reads `/api/v1/namespaces/{name}` as a request in namespace {name}: a RoleBinding
    // there may grant reading (or deleting) the namespace itself.
    namespace: route.group === '' && route.plural === 'namespaces' ? name : (route.namespace ?? ''),
    name,
  };
}

/** A list or watch narrowed by `fieldSelector=metadata.name=x` is authorized as on the object x. */
function fieldSelectedName(url: URL): string | undefined {
  const selector = url.searchParams.get('fieldSelector');
  if (!selector) return undefined;
  const terms = selector.split(',').map((t) => t.trim());
  if (terms.length !== 1) return undefined;
  const match = /^metadata\.name==?(.+)$/.exec(terms[0]!);
  return match?.[1];
}
