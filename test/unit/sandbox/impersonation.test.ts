// The sandbox's user impersonation, as kube-apiserver's filter does it: who a request acts as, and what
// the sender must be allowed to impersonate first.
import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../../src/sandbox/api/api-status-error.ts';
import { actingUser } from '../../../src/sandbox/rbac/impersonation.ts';
import type { RequestUser, ResourceAttributes } from '../../../src/sandbox/rbac/request-attributes.ts';

const rollgate: RequestUser = {
  name: 'system:serviceaccount:rollgate-system:rollgate',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:rollgate-system', 'system:authenticated'],
  admin: false,
};

/** actingUser with an authorizer that records what it was asked and refuses what `denied` names. */
function act(headers: Record<string, string>, denied: (attrs: ResourceAttributes) => boolean = () => false) {
  const asked: string[] = [];
  const user = actingUser(headers, rollgate, (sender, attrs) => {
    asked.push(`${sender.name} ${attrs.verb} ${attrs.resource} ${attrs.namespace}/${attrs.name}`);
    if (denied(attrs)) throw new ApiStatusError({ message: 'forbidden', reason: 'Forbidden', code: 403 });
  });
  return { user, asked };
}

describe('actingUser', () => {
  it('without impersonation headers, the sender', () => {
    expect(act({}).user).toBe(rollgate);
    expect(act({}).asked).toEqual([]);
  });

  it("a ServiceAccount's user name: impersonate on serviceaccounts by namespace and name; its own groups", () => {
    const { user, asked } = act({ 'impersonate-user': 'system:serviceaccount:team-a:deployer' });
    expect(asked).toEqual([`${rollgate.name} impersonate serviceaccounts team-a/deployer`]);
    expect(user).toEqual({
      name: 'system:serviceaccount:team-a:deployer',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated'],
      admin: false,
    });
  });

  it('any other user: impersonate on users; named groups each on groups, and system:authenticated', () => {
    const { user, asked } = act({ 'impersonate-user': 'jane', 'impersonate-group': 'dev, ops' });
    expect(asked).toEqual([
      `${rollgate.name} impersonate users /jane`,
      `${rollgate.name} impersonate groups /dev`,
      `${rollgate.name} impersonate groups /ops`,
    ]);
    expect(user.groups).toEqual(['dev', 'ops', 'system:authenticated']);
  });

  it('refused when the sender may not impersonate it, or with groups and no user, or an unsupported header', () => {
    expect(() =>
      act(
        { 'impersonate-user': 'system:serviceaccount:kube-system:admin' },
        (a) => a.namespace === 'kube-system',
      ),
    ).toThrow(ApiStatusError);
    expect(() => act({ 'impersonate-group': 'system:masters' })).toThrow(/without impersonating a user/);
    expect(() => act({ 'impersonate-user': 'jane', 'impersonate-extra-scopes': 'x' })).toThrow(
      /does not impersonate with impersonate-extra-scopes/,
    );
  });
});
