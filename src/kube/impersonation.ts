// Requests sent as another identity: Kubernetes user impersonation, added to a KubeConfig's API clients.
import type { KubeConfig, RequestContext } from '@kubernetes/client-node';

/**
 * The header that makes the API server act as another user, once it has checked that the sender may
 * (verb `impersonate`; for a ServiceAccount's user name, on `serviceaccounts` in its namespace, by name).
 */
export const IMPERSONATE_USER_HEADER = 'Impersonate-User';

/** One line per group: the API server reads each line as one group name, never splitting at commas. */
export const IMPERSONATE_GROUP_HEADER = 'Impersonate-Group';

/** A person signed in to the dashboard, as the API server is told: a user name and the IdP's groups. */
export interface ImpersonatedIdentity {
  user: string;
  groups: readonly string[];
}

/** A group name that cannot be sent as its own header line (see {@link impersonatingIdentity}). */
export class ImpersonatedGroupError extends Error {
  override readonly name = 'ImpersonatedGroupError';
  readonly code = 'kube.impersonated_group';
}

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

/** What undici hands an interceptor, as far as the headers go. */
interface DispatchOptions {
  headers?: Record<string, string | string[] | undefined> | string[] | null;
}
type Dispatch = (options: DispatchOptions, handler: unknown) => boolean;
interface ComposableDispatcher {
  compose(interceptor: (dispatch: Dispatch) => Dispatch): unknown;
}

/** Where undici (client-node's fetch and Node's own) keeps its global dispatcher. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * The headers as a flat name/value list with `Impersonate-Group` (folded by fetch into one comma-joined
 * value) written back as one line per group. Group names with a comma are refused before they get here.
 */
export function unfoldGroupHeader(
  headers: DispatchOptions['headers'],
): string[] | DispatchOptions['headers'] {
  if (headers === null || headers === undefined || Array.isArray(headers)) return headers;
  const flat: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    if (name.toLowerCase() === IMPERSONATE_GROUP_HEADER.toLowerCase())
      for (const group of values.flatMap((v) => v.split(',')).map((g) => g.trim())) flat.push(name, group);
    else for (const v of values) flat.push(name, v);
  }
  return flat;
}

/**
 * A view of `kubeConfig` whose clients act as a person: `Impersonate-User` and one `Impersonate-Group`
 * line per group, so RBAC bound to that user or those groups decides. The sender needs `impersonate` on
 * `users` and `groups`. fetch folds repeated headers into one line, which the API server would read as a
 * single group named "a, b": the request's dispatcher is composed with an interceptor that unfolds them,
 * and group names containing a comma are refused (they could not be told apart).
 */
export function impersonatingIdentity(kubeConfig: KubeConfig, identity: ImpersonatedIdentity): KubeConfig {
  const bad = identity.groups.find((g) => g.includes(',') || g.trim() !== g || g === '');
  if (bad !== undefined)
    throw new ImpersonatedGroupError(
      `group ${JSON.stringify(bad.slice(0, 100))} cannot be impersonated: a group name must not contain a comma or surrounding spaces`,
    );
  const acting = Object.create(kubeConfig) as KubeConfig;
  acting.applySecurityAuthentication = async (context: RequestContext): Promise<void> => {
    await kubeConfig.applySecurityAuthentication(context);
    context.setHeaderParam(IMPERSONATE_USER_HEADER, identity.user);
    if (identity.groups.length === 0) return;
    context.setHeaderParam(IMPERSONATE_GROUP_HEADER, identity.groups.join(','));
    const base = (context.getDispatcher() ?? (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER]) as
      ComposableDispatcher | undefined;
    if (base === undefined)
      throw new ImpersonatedGroupError('no HTTP dispatcher to send impersonated groups through');
    const unfolding = base.compose(
      (dispatch) => (options, handler) =>
        dispatch({ ...options, headers: unfoldGroupHeader(options.headers) }, handler),
    );
    context.setDispatcher(unfolding as Parameters<RequestContext['setDispatcher']>[0]);
  };
  return acting;
}
