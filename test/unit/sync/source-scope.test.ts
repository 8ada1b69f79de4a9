import { describe, expect, it } from 'vitest';
import { decideScope, sourceScopeOf, type SourceScopeSettings } from '../../../src/sync/source-scope.ts';

const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const rbac = (kind: string) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind, name: 'admin' });

/** Each row: a source's settings, an object of its Git, the cluster's namespaced flag, the decision. */
const rows: Array<{
  name: string;
  settings: SourceScopeSettings;
  object: { apiVersion: string; kind: string; namespace?: string; name?: string };
  namespaced: boolean;
  want: { allowed: true; namespace?: string } | { allowed: false; field: string; message: RegExp };
}> = [
  {
    name: 'an object naming no namespace goes to the own namespace',
    settings: { namespace: 'team-a' },
    object: deployment,
    namespaced: true,
    want: { allowed: true, namespace: 'team-a' },
  },
  {
    name: "the manifest's own namespace no longer wins over the scope",
    settings: { namespace: 'team-a' },
    object: { ...deployment, namespace: 'kube-system' },
    namespaced: true,
    want: { allowed: false, field: 'metadata.namespace', message: /"kube-system" is outside .*team-a/ },
  },
  {
    name: 'a source without a namespace is confined to the default namespace, not given the cluster',
    settings: {},
    object: { ...deployment, namespace: 'kube-system' },
    namespaced: true,
    want: { allowed: false, field: 'metadata.namespace', message: /namespaces: default\)/ },
  },
  {
    name: 'a source without a namespace writes to the default namespace',
    settings: {},
    object: deployment,
    namespaced: true,
    want: { allowed: true, namespace: 'default' },
  },
  {
    name: 'scope.namespaces adds namespaces to the own one',
    settings: { namespace: 'team-a', scope: { namespaces: ['team-a-canary'] } },
    object: { ...deployment, namespace: 'team-a-canary' },
    namespaced: true,
    want: { allowed: true, namespace: 'team-a-canary' },
  },
  {
    name: 'scope.namespaces * allows any namespace',
    settings: { namespace: 'platform', scope: { namespaces: ['*'] } },
    object: { ...deployment, namespace: 'kube-system' },
    namespaced: true,
    want: { allowed: true, namespace: 'kube-system' },
  },
  {
    name: 'a cluster-scoped kind is refused by default, whatever namespace Git writes on it',
    settings: { namespace: 'team-a' },
    object: { ...rbac('ClusterRoleBinding'), namespace: 'team-a' },
    namespaced: false,
    want: { allowed: false, field: 'kind', message: /ClusterRoleBinding is cluster-scoped/ },
  },
  {
    name: 'the cluster, not the manifest, says a kind is cluster-scoped (a CRD of any name)',
    settings: { namespace: 'team-a' },
    object: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w' },
    namespaced: false,
    want: { allowed: false, field: 'kind', message: /example\.com\/Widget is cluster-scoped/ },
  },
  {
    name: 'scope.clusterScoped allows a cluster-scoped kind by group and kind',
    settings: { scope: { clusterScoped: ['apiextensions.k8s.io/CustomResourceDefinition'] } },
    object: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: 'widgets.example.com',
    },
    namespaced: false,
    want: { allowed: true },
  },
  {
    name: 'a Namespace object only for a namespace of the scope',
    settings: { namespace: 'team-a', scope: { clusterScoped: ['Namespace'] } },
    object: { apiVersion: 'v1', kind: 'Namespace', name: 'kube-system' },
    namespaced: false,
    want: { allowed: false, field: 'metadata.name', message: /Namespace "kube-system" is not one of/ },
  },
  {
    name: 'its own Namespace object when Namespace is allowed',
    settings: { namespace: 'team-a', scope: { clusterScoped: ['Namespace'] } },
    object: { apiVersion: 'v1', kind: 'Namespace', name: 'team-a' },
    namespaced: false,
    want: { allowed: true },
  },
  {
    name: 'a RoleBinding inside the own namespace is refused by default (it can bind cluster-admin there)',
    settings: { namespace: 'team-a' },
    object: rbac('RoleBinding'),
    namespaced: true,
    want: { allowed: false, field: 'kind', message: /RoleBinding is refused by default/ },
  },
  {
    name: 'a Role is refused by default too',
    settings: { namespace: 'team-a' },
    object: rbac('Role'),
    namespaced: true,
    want: { allowed: false, field: 'kind', message: /Role is refused by default/ },
  },
  {
    name: 'kinds.allow * does not lift the RBAC default',
    settings: { namespace: 'team-a', scope: { kinds: { allow: ['*'] } } },
    object: rbac('RoleBinding'),
    namespaced: true,
    want: { allowed: false, field: 'kind', message: /refused by default/ },
  },
  {
    name: 'kinds.allow naming RoleBinding allows it, in the own namespace',
    settings: { namespace: 'team-a', scope: { kinds: { allow: ['*', 'RoleBinding'] } } },
    object: rbac('RoleBinding'),
    namespaced: true,
    want: { allowed: true, namespace: 'team-a' },
  },
  {
    name: 'kinds.allow is the whole list when set',
    settings: { namespace: 'team-a', scope: { kinds: { allow: ['ConfigMap', 'argoproj.io/Rollout'] } } },
    object: deployment,
    namespaced: true,
    want: { allowed: false, field: 'kind', message: /apps\/Deployment is not among the kinds/ },
  },
  {
    name: "an Argo Rollout matches argoproj.io/Rollout (it is converted to Rollgate's group)",
    settings: { namespace: 'team-a', scope: { kinds: { allow: ['argoproj.io/Rollout'] } } },
    object: { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'web' },
    namespaced: true,
    want: { allowed: true, namespace: 'team-a' },
  },
  {
    name: 'a Rollout in Rollgate’s own group matches argoproj.io/Rollout too',
    settings: { namespace: 'team-a', scope: { kinds: { allow: ['argoproj.io/Rollout'] } } },
    object: { apiVersion: 'rollgate.dev/v1alpha1', kind: 'Rollout', name: 'web' },
    namespaced: true,
    want: { allowed: true, namespace: 'team-a' },
  },
  {
    name: 'kinds.deny wins over allow',
    settings: { namespace: 'team-a', scope: { kinds: { allow: ['*'], deny: ['Secret'] } } },
    object: { apiVersion: 'v1', kind: 'Secret', name: 's' },
    namespaced: true,
    want: { allowed: false, field: 'kind', message: /Secret is denied to this source/ },
  },
  {
    name: 'a group-qualified pattern does not match the same kind in another group',
    settings: { namespace: 'team-a', scope: { kinds: { deny: ['example.com/Deployment'] } } },
    object: deployment,
    namespaced: true,
    want: { allowed: true, namespace: 'team-a' },
  },
];

describe('decideScope', () => {
  for (const row of rows)
    it(row.name, () => {
      const decision = decideScope(sourceScopeOf(row.settings, 'default'), row.object, row.namespaced);
      if (row.want.allowed) expect(decision).toEqual(row.want);
      else
        expect(decision).toEqual({
          allowed: false,
          field: row.want.field,
          message: expect.stringMatching(row.want.message),
        });
    });
});
