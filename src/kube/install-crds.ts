// Installs or upgrades CustomResourceDefinitions by server-side apply (field manager `rollgate`): idempotent.
import { APPLY_PATCH, FIELD_MANAGER, type KubeClients } from './client.ts';
import { isNotFound, kubeCall } from './errors.ts';

/** What applying one CRD did. */
export interface CrdApplyResult {
  name: string;
  result: 'created' | 'updated' | 'unchanged';
}

/** A CRD object must name itself; anything else cannot be applied. */
export class InvalidCrdError extends Error {
  override readonly name = 'InvalidCrdError';
  readonly code = 'kube.invalid_crd';
  constructor(readonly index: number) {
    super(`CRD #${index} has no metadata.name`);
  }
}

/**
 * Server-side applies each CRD with force (we own these definitions) and reports created / updated /
 * unchanged by comparing resourceVersions before and after, so running it twice reports `unchanged`.
 */
export async function installCrds(clients: KubeClients, crds: readonly object[]): Promise<CrdApplyResult[]> {
  const results: CrdApplyResult[] = [];
  for (const [index, crd] of crds.entries()) {
    const name = (crd as { metadata?: { name?: unknown } }).metadata?.name;
    if (typeof name !== 'string' || name === '') throw new InvalidCrdError(index);
    let before: string | undefined;
    try {
      const live = await kubeCall({ verb: 'get', kind: 'CustomResourceDefinition', name }, () =>
        clients.apiextensions.readCustomResourceDefinition({ name }),
      );
      before = live.metadata?.resourceVersion;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const applied = await kubeCall({ verb: 'apply', kind: 'CustomResourceDefinition', name }, () =>
      clients.apiextensions.patchCustomResourceDefinition(
        { name, body: crd, fieldManager: FIELD_MANAGER, force: true },
        APPLY_PATCH,
      ),
    );
    const after = applied.metadata?.resourceVersion;
    results.push({
      name,
      result: before === undefined ? 'created' : before === after ? 'unchanged' : 'updated',
    });
  }
  return results;
}
