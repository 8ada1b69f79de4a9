// The Kubernetes identity of an ID token's claims, read as kube-apiserver's --oidc-* flags read them.
import type { DashboardOidcConfig } from '../../config/schema.ts';

/** Why a signed-in person gets no session: their token lacks what the configuration asks for. */
export class OidcIdentityError extends Error {
  override readonly name = 'OidcIdentityError';
  readonly code = 'dashboard.oidc_identity';
}

export interface KubeIdentity {
  user: string;
  groups: string[];
}

/**
 * `usernameClaim` (a non-empty string) with its prefix: unset = `<issuer>#` unless the claim is `email`
 * (an email needs no prefix, but must not be marked unverified); `-` = none. `groupsClaim`: a string or
 * an array of strings, each prefixed; absent = no groups. Groups named `system:` are refused outright: a
 * prefix-less configuration must not let an IdP hand out `system:masters`.
 */
export function kubeIdentityOf(
  claims: Record<string, unknown>,
  config: Pick<
    DashboardOidcConfig,
    'issuer' | 'usernameClaim' | 'usernamePrefix' | 'groupsClaim' | 'groupsPrefix'
  >,
): KubeIdentity {
  const name = claims[config.usernameClaim];
  if (typeof name !== 'string' || name === '')
    throw new OidcIdentityError(
      `the ID token has no claim ${config.usernameClaim} (dashboard.oidc.usernameClaim)`,
    );
  if (config.usernameClaim === 'email' && claims.email_verified === false)
    throw new OidcIdentityError('the ID token says the email is not verified (email_verified: false)');
  const prefix =
    config.usernamePrefix === '-'
      ? ''
      : (config.usernamePrefix ?? (config.usernameClaim === 'email' ? '' : `${config.issuer}#`));
  const raw = claims[config.groupsClaim];
  const listed = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : [];
  const groups = listed
    .filter((g): g is string => typeof g === 'string' && g !== '')
    .map((g) => `${config.groupsPrefix ?? ''}${g}`);
  // Each group goes to the API server as one Impersonate-Group line; fetch joins lines with commas, so a
  // name with a comma (or surrounding spaces) could not be told apart from two.
  const unsendable = groups.find((g) => g.includes(',') || g.trim() !== g);
  if (unsendable !== undefined)
    throw new OidcIdentityError(
      `the ID token names the group ${JSON.stringify(unsendable.slice(0, 100))}, which contains a comma or surrounding spaces`,
    );
  const user = `${prefix}${name}`;
  const reserved = [user, ...groups].find((n) => n.startsWith('system:'));
  if (reserved !== undefined)
    throw new OidcIdentityError(
      `the ID token names ${JSON.stringify(reserved.slice(0, 100))}, which starts with system: (set dashboard.oidc.usernamePrefix / groupsPrefix)`,
    );
  return { user, groups };
}
