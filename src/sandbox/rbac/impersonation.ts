// User impersonation as kube-apiserver does it: `Impersonate-User` (and `Impersonate-Group`) turn a request
// into another identity's, once the sender may impersonate it.
import type { IncomingHttpHeaders } from 'node:http';
import { ApiStatusError } from '../api/api-status-error.ts';
import { serviceAccountUser } from './rbac-authorizer.ts';
import type { RequestUser, ResourceAttributes } from './request-attributes.ts';

/** `system:serviceaccount:<namespace>:<name>` split, or undefined for any other user name. */
function serviceAccountOf(user: string): { namespace: string; name: string } | undefined {
  const match = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user);
  return match ? { namespace: match[1]!, name: match[2]! } : undefined;
}

const impersonate = (resource: string, namespace: string, name: string): ResourceAttributes => ({
  kind: 'resource',
  verb: 'impersonate',
  group: '',
  version: 'v1',
  resource,
  subresource: '',
  namespace,
  name,
});

/**
 * The identity a request acts as: the sender's, or the one its impersonation headers name. Each thing
 * impersonated is authorized first with `authorize` (which throws the 403): a ServiceAccount's user name
 * as `impersonate` on `serviceaccounts` in its namespace, by name; any other user on `users`; each group
 * on `groups`. A ServiceAccount impersonated without groups gets its own (`system:serviceaccounts`,
 * `system:serviceaccounts:<namespace>`), and every impersonated user `system:authenticated`. Not
 * supported: `Impersonate-Uid` and `Impersonate-Extra-*` (answered 403, never ignored).
 */
export function actingUser(
  headers: IncomingHttpHeaders,
  sender: RequestUser,
  authorize: (user: RequestUser, attrs: ResourceAttributes) => void,
): RequestUser {
  const user = headers['impersonate-user'];
  const groups = (headers['impersonate-group'] ?? '')
    .toString()
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  const unsupported = Object.keys(headers).find(
    (h) => h === 'impersonate-uid' || h.startsWith('impersonate-extra-'),
  );
  if (unsupported !== undefined)
    throw new ApiStatusError({
      message: `the sandbox does not impersonate with ${unsupported}`,
      reason: 'Forbidden',
      code: 403,
    });
  if (typeof user !== 'string' || user === '') {
    if (groups.length > 0)
      throw new ApiStatusError({
        message: 'requested groups without impersonating a user',
        reason: 'Forbidden',
        code: 403,
      });
    return sender;
  }
  const account = serviceAccountOf(user);
  authorize(
    sender,
    account
      ? impersonate('serviceaccounts', account.namespace, account.name)
      : impersonate('users', '', user),
  );
  for (const group of groups) authorize(sender, impersonate('groups', '', group));
  const own =
    account && groups.length === 0
      ? ['system:serviceaccounts', `system:serviceaccounts:${account.namespace}`]
      : groups;
  return {
    name: account ? serviceAccountUser(account.namespace, account.name) : user,
    groups: own.includes('system:authenticated') ? own : [...own, 'system:authenticated'],
    admin: false,
  };
}
