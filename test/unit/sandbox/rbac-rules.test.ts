// RBAC rule matching and ClusterRole aggregation, row by row, as kube-apiserver and the controller do them.
import { describe, expect, it } from 'vitest';
import { aggregatedRules } from '../../../src/sandbox/rbac/cluster-role-aggregation.ts';
import { ruleAllows, type PolicyRule } from '../../../src/sandbox/rbac/rbac-authorizer.ts';
import {
  resourceAttributes,
  type RequestAttributes,
  type ResourceAttributes,
} from '../../../src/sandbox/rbac/request-attributes.ts';
import type { StoredObject } from '../../../src/sandbox/store/object-store.ts';

const request = (over: Partial<ResourceAttributes>): RequestAttributes => ({
  kind: 'resource',
  verb: 'get',
  group: '',
  version: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
  name: 'web',
  ...over,
});

describe('ruleAllows', () => {
  const rows: Array<{ name: string; rule: PolicyRule; given: RequestAttributes; want: boolean }> = [
    {
      name: 'exact group, resource and verb',
      rule: { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      given: request({}),
      want: true,
    },
    {
      name: 'another verb',
      rule: { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      given: request({}),
      want: false,
    },
    {
      name: 'another group',
      rule: { apiGroups: ['apps'], resources: ['pods'], verbs: ['get'] },
      given: request({}),
      want: false,
    },
    {
      name: '* for verbs, groups and resources',
      rule: { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      given: request({ verb: 'deletecollection', group: 'apps', resource: 'replicasets', name: '' }),
      want: true,
    },
    {
      name: 'the resource does not grant its subresource',
      rule: { apiGroups: [''], resources: ['pods'], verbs: ['create'] },
      given: request({ verb: 'create', subresource: 'eviction' }),
      want: false,
    },
    {
      name: 'resource/subresource',
      rule: { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
      given: request({ verb: 'create', subresource: 'eviction' }),
      want: true,
    },
    {
      name: '*/subresource',
      rule: { apiGroups: ['apps'], resources: ['*/scale'], verbs: ['update'] },
      given: request({ verb: 'update', group: 'apps', resource: 'replicasets', subresource: 'scale' }),
      want: true,
    },
    {
      name: '*/subresource does not grant the resource',
      rule: { apiGroups: ['apps'], resources: ['*/scale'], verbs: ['update'] },
      given: request({ verb: 'update', group: 'apps', resource: 'replicasets' }),
      want: false,
    },
    {
      name: 'resourceNames: the named object',
      rule: { apiGroups: [''], resources: ['pods'], resourceNames: ['web'], verbs: ['get'] },
      given: request({}),
      want: true,
    },
    {
      name: 'resourceNames: a list (no name) is refused',
      rule: { apiGroups: [''], resources: ['pods'], resourceNames: ['web'], verbs: ['list'] },
      given: request({ verb: 'list', name: '' }),
      want: false,
    },
    {
      name: 'nonResourceURLs: exact',
      rule: { nonResourceURLs: ['/version'], verbs: ['get'] },
      given: { kind: 'nonResource', verb: 'get', path: '/version' },
      want: true,
    },
    {
      name: 'nonResourceURLs: prefix with *',
      rule: { nonResourceURLs: ['/apis/*'], verbs: ['get'] },
      given: { kind: 'nonResource', verb: 'get', path: '/apis/apps/v1' },
      want: true,
    },
    {
      name: 'nonResourceURLs: not the bare prefix of another path',
      rule: { nonResourceURLs: ['/api'], verbs: ['get'] },
      given: { kind: 'nonResource', verb: 'get', path: '/apis' },
      want: false,
    },
    {
      name: 'a resource rule grants no path',
      rule: { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      given: { kind: 'nonResource', verb: 'get', path: '/version' },
      want: false,
    },
  ];
  it.each(rows)('$name', ({ rule, given, want }) => {
    expect(ruleAllows(rule, given)).toBe(want);
  });
});

describe('resourceAttributes', () => {
  const attrs = (
    method: string,
    url: string,
    route: { name?: string; plural?: string; namespace?: string },
  ) =>
    resourceAttributes(method, new URL(url, 'http://sandbox'), {
      group: '',
      version: 'v1',
      plural: route.plural ?? 'pods',
      namespace: route.namespace,
      name: route.name,
      subresource: undefined,
    });

  it.each([
    ['GET', '/p', { name: 'web', namespace: 'ns' }, 'get'],
    ['GET', '/p', { namespace: 'ns' }, 'list'],
    ['GET', '/p?watch=true', { namespace: 'ns' }, 'watch'],
    ['POST', '/p', { namespace: 'ns' }, 'create'],
    ['PUT', '/p', { name: 'web', namespace: 'ns' }, 'update'],
    ['PATCH', '/p', { name: 'web', namespace: 'ns' }, 'patch'],
    ['DELETE', '/p', { name: 'web', namespace: 'ns' }, 'delete'],
    ['DELETE', '/p', { namespace: 'ns' }, 'deletecollection'],
  ] as const)('%s %s %j is %s', (method, url, route, verb) => {
    expect(attrs(method, url, route).verb).toBe(verb);
  });

  it('authorizes a list narrowed to metadata.name as on that object, and a namespace in itself', () => {
    expect(attrs('GET', '/p?watch=1&fieldSelector=metadata.name%3Dweb', { namespace: 'ns' })).toMatchObject({
      verb: 'watch',
      name: 'web',
    });
    expect(attrs('GET', '/p', { plural: 'namespaces', name: 'team' })).toMatchObject({
      namespace: 'team',
      name: 'team',
    });
  });
});

describe('aggregatedRules', () => {
  const role = (
    name: string,
    labels: Record<string, string>,
    rules: PolicyRule[],
    extra = {},
  ): StoredObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels },
    rules,
    ...extra,
  });
  const read: PolicyRule = { apiGroups: ['rollgate.dev'], resources: ['rollouts'], verbs: ['get'] };
  const write: PolicyRule = { apiGroups: ['rollgate.dev'], resources: ['rollouts'], verbs: ['patch'] };

  it('collects the selected roles’ rules by name, each once, and leaves roles without a rule alone', () => {
    const view = role('view', {}, [], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'aggregate-to-view': 'true' } }] },
    });
    const roles = [
      view,
      role('z-extra', { 'aggregate-to-view': 'true' }, [write, read]),
      role('a-rollgate', { 'aggregate-to-view': 'true' }, [read]),
      role('unrelated', {}, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]),
    ];
    expect(aggregatedRules(view, roles)).toEqual([read, write]);
    expect(aggregatedRules(roles[1]!, roles)).toBeUndefined();
  });
});
