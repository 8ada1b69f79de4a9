// The sandbox's SubjectAccessReview: the user and groups named in the review, exactly, against RBAC.
import { describe, expect, it } from 'vitest';
import type { RequestUser, ResourceAttributes } from '../../../src/sandbox/rbac/request-attributes.ts';
import { reviewSubjectAccess } from '../../../src/sandbox/rbac/subject-access-review.ts';

const asked = (spec: Record<string, unknown>) => ({
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SubjectAccessReview',
  spec,
});

describe('SubjectAccessReview in the sandbox', () => {
  it('asks the authorizer about the named user, groups and resource, and answers allowed', () => {
    const calls: Array<[RequestUser, ResourceAttributes]> = [];
    const decide = (user: RequestUser, attrs: ResourceAttributes): boolean => {
      calls.push([user, attrs]);
      return user.groups.includes('team-a') && attrs.namespace === 'team-a';
    };
    const review = (groups: string[], namespace: string) =>
      reviewSubjectAccess(
        asked({
          user: 'alice',
          groups,
          resourceAttributes: { verb: 'get', group: 'rollgate.dev', resource: 'rollouts', namespace },
        }),
        decide,
      ).status;
    expect(review(['team-a'], 'team-a')).toMatchObject({ allowed: true });
    expect(review(['team-a'], 'team-b')).toEqual({ allowed: false });
    expect(review(['team-b'], 'team-a')).toEqual({ allowed: false });
    expect(calls[0]).toEqual([
      { name: 'alice', groups: ['team-a'], admin: false },
      {
        kind: 'resource',
        verb: 'get',
        group: 'rollgate.dev',
        version: '',
        resource: 'rollouts',
        subresource: '',
        namespace: 'team-a',
        name: '',
      },
    ]);
  });

  it('without resource attributes is not allowed; without an authorizer (no RBAC mode) everything is', () => {
    expect(reviewSubjectAccess(asked({ user: 'alice' }), () => true).status).toMatchObject({
      allowed: false,
    });
    expect(
      reviewSubjectAccess(
        asked({ user: 'alice', resourceAttributes: { verb: 'delete', resource: 'pods' } }),
        undefined,
      ).status,
    ).toMatchObject({ allowed: true });
  });
});
