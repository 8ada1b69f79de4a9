// Which namespaces' Rollouts a signed-in person may read, asked of the API server (SubjectAccessReview).
import { AuthorizationV1Api } from '@kubernetes/client-node';
import type { Clock } from '../../clock/clock.ts';
import { makePooledApiClient, type KubeClients } from '../../kube/client.ts';
import { toKubeError } from '../../kube/errors.ts';
import type { ImpersonatedIdentity } from '../../kube/impersonation.ts';

/** How long an answer is kept: a revoked binding shows within this, and a page's reads cost one review. */
export const REVIEW_CACHE_MS = 30_000;

/** Entries kept at most, so many users and namespaces cannot grow memory without bound. */
const MAX_ENTRIES = 10_000;

/**
 * Whether `identity` may `get` Rollouts (or another resource) of `group` in `namespace`, by a SubjectAccessReview that Rollgate
 * sends with its own identity (it needs `create` on subjectaccessreviews), cached {@link REVIEW_CACHE_MS}.
 */
export class RolloutReadReview {
  private readonly api: AuthorizationV1Api;
  private readonly cache = new Map<string, { allowed: boolean; until: number }>();

  constructor(
    clients: KubeClients,
    private readonly clock: Clock,
  ) {
    this.api = makePooledApiClient(clients.kubeConfig, AuthorizationV1Api);
  }

  /** `resource`: `rollouts` (the default) or another resource of the group the page shows (`experiments`). */
  async mayGet(
    identity: ImpersonatedIdentity,
    namespace: string,
    group: string,
    resource = 'rollouts',
  ): Promise<boolean> {
    const key = JSON.stringify([identity.user, identity.groups, namespace, group, resource]);
    const now = this.clock.now().getTime();
    const known = this.cache.get(key);
    if (known !== undefined && known.until > now) return known.allowed;
    let allowed: boolean;
    try {
      const review = await this.api.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: identity.user,
            // As the API server gives every authenticated user (impersonated ones too).
            groups: [...identity.groups, 'system:authenticated'],
            resourceAttributes: { verb: 'get', group, resource, namespace },
          },
        },
      });
      allowed = review.status?.allowed === true;
    } catch (err) {
      throw toKubeError(err, { verb: 'create', kind: 'SubjectAccessReview' });
    }
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(key, { allowed, until: now + REVIEW_CACHE_MS });
    return allowed;
  }
}
