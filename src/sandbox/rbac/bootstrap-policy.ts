// The default roles kube-apiserver creates at start that the sandbox's RBAC mode needs, as it writes them.
import type { ResourceRegistry } from '../resources/resource-registry.ts';
import type { ObjectStore, StoredObject } from '../store/object-store.ts';
import { RBAC_GROUP } from './rbac-authorizer.ts';

const AUTOUPDATE = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };
const BOOTSTRAP = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };

const clusterRole = (name: string, rules: unknown[], extra: Record<string, unknown> = {}): StoredObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: 'ClusterRole',
  metadata: { name, labels: { ...BOOTSTRAP }, annotations: { ...AUTOUPDATE } },
  rules,
  ...extra,
});

const bindGroups = (name: string, groups: string[]): StoredObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: { name, labels: { ...BOOTSTRAP }, annotations: { ...AUTOUPDATE } },
  roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name },
  subjects: groups.map((g) => ({ apiGroup: RBAC_GROUP, kind: 'Group', name: g })),
});

/** An aggregated role; `into` is the label that folds it into the next wider one (view → edit → admin). */
const aggregated = (name: string, label: string, into?: string): StoredObject => {
  const role = clusterRole(name, [], {
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] },
  });
  if (into) (role.metadata.labels as Record<string, string>)[into] = 'true';
  return role;
};

/**
 * kube-apiserver's bootstrap policy, the part that decides what Rollgate meets: discovery, /version and
 * the health paths for every authenticated identity (`system:discovery`, `system:public-info-viewer`,
 * both bound to `system:authenticated`), and the user-facing `view` / `edit` / `admin` roles as aggregates
 * of whatever carries their `aggregate-to-*` label. Their built-in rules for core kinds (pods, deployments
 * …) are left out: the aggregated roles hold only what installs add to them.
 */
export const BOOTSTRAP_POLICY: readonly StoredObject[] = [
  clusterRole('system:discovery', [
    {
      verbs: ['get'],
      nonResourceURLs: [
        '/api',
        '/api/*',
        '/apis',
        '/apis/*',
        '/healthz',
        '/livez',
        '/openapi',
        '/openapi/*',
        '/readyz',
        '/version',
        '/version/',
      ],
    },
  ]),
  bindGroups('system:discovery', ['system:authenticated']),
  clusterRole('system:public-info-viewer', [
    { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
  ]),
  bindGroups('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  aggregated('admin', 'rbac.authorization.k8s.io/aggregate-to-admin'),
  aggregated(
    'edit',
    'rbac.authorization.k8s.io/aggregate-to-edit',
    'rbac.authorization.k8s.io/aggregate-to-admin',
  ),
  aggregated(
    'view',
    'rbac.authorization.k8s.io/aggregate-to-view',
    'rbac.authorization.k8s.io/aggregate-to-edit',
  ),
];

/** Stores the bootstrap policy (at start, before the first request). */
export function storeBootstrapPolicy(store: ObjectStore, registry: ResourceRegistry): void {
  for (const object of BOOTSTRAP_POLICY)
    store.create(registry.builtIn(RBAC_GROUP, object.kind as string), structuredClone(object), '');
}
