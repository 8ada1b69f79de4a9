// Installs or upgrades CustomResourceDefinitions by server-side apply (field manager `rollgate`), writing only
// those that differ from what is installed.
import { APPLY_PATCH, FIELD_MANAGER, type KubeClients } from './client.ts';
import { driftedFields } from './drift.ts';
import { isNotFound, kubeCall } from './errors.ts';

/** What installing one CRD did. */
export interface CrdApplyResult {
  name: string;
  result: 'created' | 'updated' | 'unchanged';
}

export interface InstallCrdsOptions {
  /**
   * Runs the install of one CRD (read, compare, apply when different); a caller that retries passes its
   * retry here, so a failure repeats only that CRD's requests, not those of the CRDs already done.
   */
  each?: (name: string, install: () => Promise<CrdApplyResult>) => Promise<CrdApplyResult>;
}

/** A CRD object must name itself; anything else cannot be applied. */
export class InvalidCrdError extends Error {
  override readonly name = 'InvalidCrdError';
  readonly code = 'kube.invalid_crd';
  constructor(readonly index: number) {
    super(`CRD #${index} has no metadata.name`);
  }
}

/** The installed CRD as the API server sends it (the untyped client keeps `x-kubernetes-*` field names). */
async function readInstalled(
  clients: KubeClients,
  name: string,
): Promise<Record<string, unknown> | undefined> {
  try {
    return (await kubeCall({ verb: 'get', kind: 'CustomResourceDefinition', name }, () =>
      clients.custom.getClusterCustomObject({
        group: 'apiextensions.k8s.io',
        version: 'v1',
        plural: 'customresourcedefinitions',
        name,
      }),
    )) as Record<string, unknown>;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Reads each CRD and server-side applies it (with force: we own these definitions) only when the installed
 * one is missing or no longer holds every value we would write; a CRD already at the current version is
 * left alone, so a restart writes nothing and a running API server sees no needless CRD updates.
 */
export async function installCrds(
  clients: KubeClients,
  crds: readonly object[],
  options: InstallCrdsOptions = {},
): Promise<CrdApplyResult[]> {
  return eachCrd(crds, options, (name, crd) => installCrd(clients, name, crd));
}

/** Runs `install` for each CRD in order (through `options.each`), after checking it has a name. */
async function eachCrd(
  crds: readonly object[],
  options: InstallCrdsOptions,
  install: (name: string, crd: object) => Promise<CrdApplyResult>,
): Promise<CrdApplyResult[]> {
  const each = options.each ?? ((_name, run) => run());
  const results: CrdApplyResult[] = [];
  for (const [index, crd] of crds.entries()) {
    const name = (crd as { metadata?: { name?: unknown } }).metadata?.name;
    if (typeof name !== 'string' || name === '') throw new InvalidCrdError(index);
    results.push(await each(name, () => install(name, crd)));
  }
  return results;
}

/**
 * Creates each CRD that is not installed and leaves every installed one exactly as it is, whoever wrote
 * it: for definitions that are someone else's (Argo Rollouts' `argoproj.io` CRDs), where upgrading
 * them would change what their owner ships. `unchanged` means present, not compared.
 */
export async function installCrdsWhenAbsent(
  clients: KubeClients,
  crds: readonly object[],
  options: InstallCrdsOptions = {},
): Promise<CrdApplyResult[]> {
  return eachCrd(crds, options, async (name, crd) => {
    if ((await readInstalled(clients, name)) !== undefined) return { name, result: 'unchanged' };
    // Applied without force: should the CRD appear between the read and this write (Argo's install
    // running at the same moment), a field Argo's manager set differently is a 409 conflict, which
    // the caller's start step retries, and the next read finds it present.
    // (The same apply patch as installCrd: the typed create would drop the x-kubernetes-* fields.)
    await kubeCall({ verb: 'apply', kind: 'CustomResourceDefinition', name }, () =>
      clients.apiextensions.patchCustomResourceDefinition(
        { name, body: crd, fieldManager: FIELD_MANAGER, force: false },
        APPLY_PATCH,
      ),
    );
    return { name, result: 'created' };
  });
}

async function installCrd(clients: KubeClients, name: string, crd: object): Promise<CrdApplyResult> {
  const installed = await readInstalled(clients, name);
  if (installed && driftedFields(crd as Record<string, unknown>, installed).length === 0)
    return { name, result: 'unchanged' };
  await kubeCall({ verb: 'apply', kind: 'CustomResourceDefinition', name }, () =>
    clients.apiextensions.patchCustomResourceDefinition(
      { name, body: crd, fieldManager: FIELD_MANAGER, force: true },
      APPLY_PATCH,
    ),
  );
  return { name, result: installed ? 'updated' : 'created' };
}
