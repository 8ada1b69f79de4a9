// The registrations a deployment has (local, config contexts, Argo CD Secrets) and which one holds each name: pure.
import type { ClusterOrigin } from './cluster-set.ts';
import type { ClusterConnectionSpec, SecretRef } from './argocd-cluster-secret.ts';

/** How a registration reaches its cluster; the spec holds credentials (never logged). */
export type ClusterTarget =
  | { readonly kind: 'local' }
  | { readonly kind: 'context'; readonly context: string; readonly kubeconfig?: string | undefined }
  | { readonly kind: 'spec'; readonly spec: ClusterConnectionSpec };

/** One registration as declared, usable or not. */
export interface ClusterRegistration {
  readonly name: string;
  readonly origin: ClusterOrigin;
  /** Where it is declared, unique per registration: `kubernetes`, `clusters[2]`, `Secret argocd/prod`. */
  readonly declaredBy: string;
  /** Why it cannot be used (empty: usable). Never a credential. */
  readonly problems: readonly string[];
  readonly target?: ClusterTarget | undefined;
  /** The Secret it came from, for Events. */
  readonly secret?: SecretRef | undefined;
}

/** Which registration holds each name, and the ones that are refused, with why. */
export interface ResolvedRegistrations {
  readonly active: ReadonlyMap<string, ClusterRegistration>;
  readonly refused: ReadonlyArray<{ readonly registration: ClusterRegistration; readonly message: string }>;
}

const RANK: Readonly<Record<ClusterOrigin, number>> = { local: 0, kubeconfig: 1, 'argocd-secret': 2 };

/**
 * Decides which registration holds each name: the local cluster first, then configured contexts (in
 * file order), then Secrets by namespace/name. Every process reaches the same answer from the same
 * registrations, whatever order it heard of them. A registration with problems, or whose name is
 * already held, is refused with a message saying why.
 */
export function resolveRegistrations(registrations: readonly ClusterRegistration[]): ResolvedRegistrations {
  const ordered = [...registrations].sort(
    (a, b) =>
      RANK[a.origin] - RANK[b.origin] ||
      (a.origin === 'kubeconfig'
        ? configIndex(a) - configIndex(b)
        : a.declaredBy.localeCompare(b.declaredBy)),
  );
  const active = new Map<string, ClusterRegistration>();
  const refused: Array<{ registration: ClusterRegistration; message: string }> = [];
  for (const registration of ordered) {
    if (registration.problems.length > 0) {
      refused.push({ registration, message: registration.problems.join('; ') });
      continue;
    }
    const holder = active.get(registration.name);
    if (holder !== undefined) {
      refused.push({
        registration,
        message:
          holder.origin === 'local'
            ? `the name "${registration.name}" is the local cluster's (kubernetes.clusterName); pick another`
            : `the name "${registration.name}" is already registered by ${holder.declaredBy}`,
      });
      continue;
    }
    active.set(registration.name, registration);
  }
  return { active, refused };
}

function configIndex(registration: ClusterRegistration): number {
  return Number(/\[(\d+)\]/.exec(registration.declaredBy)?.[1] ?? 0);
}

/** Two registrations that reach the same cluster the same way (same target, credentials included). */
export function sameTarget(a: ClusterRegistration, b: ClusterRegistration): boolean {
  return JSON.stringify(a.target ?? null) === JSON.stringify(b.target ?? null);
}
