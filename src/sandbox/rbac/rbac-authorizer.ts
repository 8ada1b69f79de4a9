// Kubernetes' RBAC authorizer over the Roles, ClusterRoles and their bindings stored in the sandbox.
import { ApiStatusError } from '../api/api-status-error.ts';
import { isPlainObject } from '../controllers/index.ts';
import type { ResourceRegistry } from '../resources/resource-registry.ts';
import type { ObjectStore, StoredObject } from '../store/object-store.ts';
import type { RequestAttributes, RequestUser, ResourceAttributes } from './request-attributes.ts';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** One rule of a Role or ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface RoleRef {
  kind?: string;
  name?: string;
}

/** A stored object's `rules` as PolicyRules; anything malformed is skipped (it grants nothing). */
export function rulesOf(role: StoredObject | undefined): PolicyRule[] {
  const rules = role?.rules;
  if (!Array.isArray(rules)) return [];
  return rules.filter(
    (r): r is PolicyRule => isPlainObject(r) && Array.isArray((r as { verbs?: unknown }).verbs),
  );
}

const has = (values: readonly string[] | undefined, value: string): boolean =>
  (values ?? []).some((v) => v === '*' || v === value);

// rbac/v1 ResourceMatches: `*`, the exact `resource/subresource`, or `*` + `/subresource`.
function resourceMatches(rule: PolicyRule, attrs: ResourceAttributes): boolean {
  const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  return (rule.resources ?? []).some(
    (r) => r === '*' || r === combined || (attrs.subresource !== '' && r === `*/${attrs.subresource}`),
  );
}

/** A non-resource URL rule: exact, `*`, or a prefix ending in `*` (`/apis/*`). */
function pathMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
  );
}

/** Whether one rule allows the request (rbac/v1 RuleAllows). */
export function ruleAllows(rule: PolicyRule, attrs: RequestAttributes): boolean {
  if (!has(rule.verbs, attrs.verb)) return false;
  if (attrs.kind === 'nonResource') return pathMatches(rule, attrs.path);
  if (!has(rule.apiGroups, attrs.group) || !resourceMatches(rule, attrs)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(attrs.name);
}

/** `system:serviceaccount:<namespace>:<name>`, the user name of a ServiceAccount's tokens. */
export const serviceAccountUser = (namespace: string, name: string): string =>
  `system:serviceaccount:${namespace}:${name}`;

/** rbac/v1 appliesToUser; a ServiceAccount subject without namespace takes the RoleBinding's. */
function subjectMatches(subject: Subject, user: RequestUser, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.name;
    case 'Group':
      return user.groups.includes(subject.name ?? '');
    case 'ServiceAccount':
      return serviceAccountUser(subject.namespace || bindingNamespace, subject.name ?? '') === user.name;
    default:
      return false;
  }
}

function bindsUser(binding: StoredObject, user: RequestUser): boolean {
  const subjects = Array.isArray(binding.subjects) ? (binding.subjects as Subject[]) : [];
  return subjects.some((s) => isPlainObject(s) && subjectMatches(s, user, binding.metadata.namespace ?? ''));
}

/**
 * Decides requests as kube-apiserver's RBAC authorizer: allowed when a rule of a role bound to the user
 * (a ClusterRoleBinding anywhere, a RoleBinding in the request's namespace) allows it. Rules are read from
 * the store on every request, so a Role applied a moment ago counts at once (a real server's informers lag
 * by milliseconds). Aggregated ClusterRoles carry the rules the aggregation controller wrote into them.
 */
export class RbacAuthorizer {
  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
  ) {}

  authorize(user: RequestUser, attrs: RequestAttributes): boolean {
    if (user.admin) return true;
    const type = (kind: string) => this.registry.builtIn(RBAC_GROUP, kind);
    const clusterRole = (name: string) => this.store.get(type('ClusterRole'), '', name);
    for (const binding of this.store.list(type('ClusterRoleBinding'))) {
      const ref = (binding.roleRef ?? {}) as RoleRef;
      if (ref.kind !== 'ClusterRole' || !bindsUser(binding, user)) continue;
      if (rulesOf(clusterRole(ref.name ?? '')).some((r) => ruleAllows(r, attrs))) return true;
    }
    if (attrs.kind !== 'resource' || attrs.namespace === '') return false;
    for (const binding of this.store.list(type('RoleBinding'), attrs.namespace)) {
      if (!bindsUser(binding, user)) continue;
      const ref = (binding.roleRef ?? {}) as RoleRef;
      const role =
        ref.kind === 'Role'
          ? this.store.get(type('Role'), attrs.namespace, ref.name ?? '')
          : ref.kind === 'ClusterRole'
            ? clusterRole(ref.name ?? '')
            : undefined;
      if (rulesOf(role).some((r) => ruleAllows(r, attrs))) return true;
    }
    return false;
  }
}

/**
 * The 403 kube-apiserver answers for a denied request, word for word (responsewriters.forbiddenMessage
 * wrapped by apierrors.NewForbidden): e.g. `rollouts.rollgate.dev "web" is forbidden: User
 * "system:serviceaccount:rollgate-system:rollgate" cannot delete resource "rollouts" in API group
 * "rollgate.dev" in the namespace "default"`.
 */
export function forbidden(user: RequestUser, attrs: RequestAttributes): ApiStatusError {
  if (attrs.kind === 'nonResource') {
    return new ApiStatusError({
      message: `forbidden: User "${user.name}" cannot ${attrs.verb} path "${attrs.path}"`,
      reason: 'Forbidden',
      details: {},
      code: 403,
    });
  }
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const where = attrs.namespace ? `in the namespace "${attrs.namespace}"` : 'at the cluster scope';
  const why = `User "${user.name}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.group}" ${where}`;
  const qualified = attrs.group === '' ? attrs.resource : `${attrs.resource}.${attrs.group}`;
  return new ApiStatusError({
    message: attrs.name
      ? `${qualified} "${attrs.name}" is forbidden: ${why}`
      : `${qualified} is forbidden: ${why}`,
    reason: 'Forbidden',
    details: {
      ...(attrs.name ? { name: attrs.name } : {}),
      ...(attrs.group ? { group: attrs.group } : {}),
      kind: attrs.resource,
    },
    code: 403,
  });
}
