// authorization.k8s.io/v1 SubjectAccessReview as kube-apiserver answers it: may this user (and groups) do this?
import { isPlainObject } from '../controllers/index.ts';
import type { RequestUser, ResourceAttributes } from './request-attributes.ts';

export const SUBJECT_ACCESS_REVIEW_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/** What creating one is authorized as: `create` on the cluster-scoped `subjectaccessreviews`. */
export const CREATE_SUBJECT_ACCESS_REVIEW: ResourceAttributes = {
  kind: 'resource',
  verb: 'create',
  group: 'authorization.k8s.io',
  version: 'v1',
  resource: 'subjectaccessreviews',
  subresource: '',
  namespace: '',
  name: '',
};

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * The answered review for `body`: the user and groups it names (exactly those: the API server adds none),
 * the resource attributes asked about, and `allowed` from `decide` (undefined when no authorizer runs:
 * everything is allowed, as in a cluster without RBAC). Only resource attributes are supported; a review
 * without them is answered not allowed, with the reason saying so.
 */
export function reviewSubjectAccess(
  body: unknown,
  decide: ((user: RequestUser, attrs: ResourceAttributes) => boolean) | undefined,
): Record<string, unknown> {
  const spec = isPlainObject(body) && isPlainObject(body.spec) ? body.spec : {};
  const asked = isPlainObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const groups = Array.isArray(spec.groups) ? spec.groups.filter((g) => typeof g === 'string') : [];
  let status: Record<string, unknown>;
  if (asked === undefined) status = { allowed: false, reason: 'the sandbox reviews resourceAttributes only' };
  else {
    const attrs: ResourceAttributes = {
      kind: 'resource',
      verb: text(asked.verb),
      group: text(asked.group),
      version: text(asked.version),
      resource: text(asked.resource),
      subresource: text(asked.subresource),
      namespace: text(asked.namespace),
      name: text(asked.name),
    };
    const allowed = decide ? decide({ name: text(spec.user), groups, admin: false }, attrs) : true;
    status = allowed ? { allowed: true, reason: 'allowed by RBAC' } : { allowed: false };
  }
  return {
    kind: 'SubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status,
  };
}
