// Bearer tokens minted for ServiceAccounts (TokenRequest) and the users they authenticate as.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock/clock.ts';
import type { ResourceRegistry } from '../resources/resource-registry.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { serviceAccountUser } from './rbac-authorizer.ts';
import type { RequestUser } from './request-attributes.ts';

/** What a minted token stands for: the ServiceAccount (by uid, so a re-created one does not inherit it). */
interface MintedToken {
  namespace: string;
  name: string;
  uid: string;
  expiresAt: number;
}

/** kube-apiserver's default and minimum TokenRequest lifetimes. */
export const DEFAULT_TOKEN_SECONDS = 3600;
export const MIN_TOKEN_SECONDS = 600;

/**
 * The sandbox's token authenticator for ServiceAccounts. Tokens are opaque random strings kept in memory
 * (a real server signs a JWT; nothing here reads the token's content), valid until they expire or their
 * ServiceAccount is deleted, as a bound token is.
 */
export class ServiceAccountTokens {
  private readonly tokens = new Map<string, MintedToken>();

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
    private readonly clock: Clock,
  ) {}

  /** A new token for an existing ServiceAccount; undefined when there is no such ServiceAccount. */
  mint(
    namespace: string,
    name: string,
    seconds = DEFAULT_TOKEN_SECONDS,
  ): { token: string; expiresAt: Date } | undefined {
    const account = this.store.get(this.registry.builtIn('', 'ServiceAccount'), namespace, name);
    if (!account) return undefined;
    const token = randomBytes(32).toString('base64url');
    const expiresAt = this.clock.now().getTime() + seconds * 1000;
    this.tokens.set(token, { namespace, name, uid: account.metadata.uid ?? '', expiresAt });
    return { token, expiresAt: new Date(expiresAt) };
  }

  /** The user a bearer token authenticates as, or undefined (unknown, expired, or its account is gone). */
  authenticate(token: string): RequestUser | undefined {
    const minted = this.tokens.get(token);
    if (!minted) return undefined;
    const account = this.store.get(
      this.registry.builtIn('', 'ServiceAccount'),
      minted.namespace,
      minted.name,
    );
    if (this.clock.now().getTime() >= minted.expiresAt || account?.metadata.uid !== minted.uid) {
      this.tokens.delete(token);
      return undefined;
    }
    return {
      name: serviceAccountUser(minted.namespace, minted.name),
      groups: [
        'system:serviceaccounts',
        `system:serviceaccounts:${minted.namespace}`,
        'system:authenticated',
      ],
      admin: false,
    };
  }
}
