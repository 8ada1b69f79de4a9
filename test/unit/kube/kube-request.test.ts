import { describe, expect, it } from 'vitest';
import { describeKubeRequest } from '../../../src/kube/kube-request.ts';

const SERVER = 'https://127.0.0.1:6443';

describe('describeKubeRequest', () => {
  it.each([
    ['GET', '/api/v1/namespaces/team-a/pods', 'list', 'pods'],
    ['GET', '/api/v1/namespaces/team-a/pods/web-1', 'get', 'pods'],
    ['GET', '/api/v1/namespaces/team-a/pods?watch=true', 'watch', 'pods'],
    ['POST', '/apis/apps/v1/namespaces/team-a/replicasets', 'create', 'replicasets.apps'],
    ['PATCH', '/apis/apps/v1/namespaces/team-a/replicasets/web-abc/scale', 'patch', 'replicasets.apps/scale'],
    [
      'PUT',
      '/apis/argoproj.io/v1alpha1/namespaces/a/rollouts/web/status',
      'update',
      'rollouts.argoproj.io/status',
    ],
    ['DELETE', '/api/v1/namespaces/team-a/configmaps/cfg', 'delete', 'configmaps'],
    ['DELETE', '/api/v1/namespaces/team-a/configmaps', 'deletecollection', 'configmaps'],
    ['GET', '/api/v1/namespaces', 'list', 'namespaces'],
    ['GET', '/api/v1/namespaces/team-a', 'get', 'namespaces'],
    [
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rollouts.rollgate.dev',
      'get',
      'customresourcedefinitions.apiextensions.k8s.io',
    ],
    ['GET', '/apis/rollgate.dev/v1alpha1/gitsources', 'list', 'gitsources.rollgate.dev'],
    ['GET', '/apis', 'get', 'discovery'],
    ['GET', '/apis/apps/v1', 'get', 'discovery'],
    ['GET', '/version', 'get', 'version'],
  ])('%s %s is %s of %s', (method, path, verb, resource) => {
    expect(describeKubeRequest(method, `${SERVER}${path}`)).toEqual({ verb, resource });
  });

  it('never puts an object name or a namespace in the resource', () => {
    const { resource } = describeKubeRequest(
      'GET',
      `${SERVER}/api/v1/namespaces/secret-team/secrets/db-password`,
    );
    expect(resource).toBe('secrets');
  });
});
