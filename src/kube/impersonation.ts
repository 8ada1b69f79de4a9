// Requests sent as another identity: Kubernetes user impersonation, added to a KubeConfig's API clients.
import type { KubeConfig, RequestContext } from '@kubernetes/client-node';

/**
 * The header that makes the API server act as another user, once it has checked that the sender may
 * (verb `impersonate`; for a ServiceAccount's user name, on `serviceaccounts` in its namespace, by name).
 */
export const IMPERSONATE_USER_HEADER = 'Impersonate-User';

/** The user name a ServiceAccount's requests carry. */
export const serviceAccountUser = (namespace: string, name: string): string =>
  `system:serviceaccount:${namespace}:${name}`;

/**
 * The headers of a request sent as `user`. The user alone, no `Impersonate-Group`: for a ServiceAccount's
 * user name the API server gives the impersonated identity the ServiceAccount's own groups
 * (`system:serviceaccounts`, `system:serviceaccounts:<namespace>`) and `system:authenticated`, exactly
 * what its token would carry. Naming the groups would need `impersonate` on `groups` too, a right that
 * also covers `system:masters`; and fetch folds repeated headers into one comma-joined line, which the
 * API server would read as a single group named "a, b".
 */
export function impersonationHeaders(user: string): Record<string, string> {
  return { [IMPERSONATE_USER_HEADER]: user };
}

/**
 * A view of `kubeConfig` whose API clients send every request as `user`: its own credentials
 * authenticate (and rate-limit, when `kubeConfig` does), then the impersonation headers are added.
 * Everything else (cluster, contexts, TLS) is read through to `kubeConfig`.
 */
export function impersonating(kubeConfig: KubeConfig, user: string): KubeConfig {
  const headers = Object.entries(impersonationHeaders(user));
  const acting = Object.create(kubeConfig) as KubeConfig;
  acting.applySecurityAuthentication = async (context: RequestContext): Promise<void> => {
    await kubeConfig.applySecurityAuthentication(context);
    for (const [name, value] of headers) context.setHeaderParam(name, value);
  };
  return acting;
}
