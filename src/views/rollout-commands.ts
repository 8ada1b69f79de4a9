// The user verbs on a Rollout (promote, abort, retry, restart, pause, resume): the same spec/status patches Argo's kubectl plugin sends.
import type { Clock } from '../clock/clock.ts';
import {
  ARGO_API,
  ROLLGATE_API,
  drivenApiOf,
  type DrivenApi,
  type DrivenGroup,
} from '../manifest/driven-api.ts';
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { VERB_FIELD_MANAGER } from '../kube/field-managers.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import type { RolloutKey } from '../reconciler/rollout-key.ts';

/**
 * What the verbs use of a connection: client-node's clients (KubeClients: the dashboard, the CLI with
 * --cluster or a kubeconfig client-node must read) or the CLI's CustomObjectClient, which needs no
 * client-node (custom-object-client.ts). Nothing else here may import client-node: the verbs start fast
 * for that.
 */
export interface RolloutVerbClients {
  custom: Pick<
    CustomObjectsApi,
    'getNamespacedCustomObject' | 'patchNamespacedCustomObject' | 'patchNamespacedCustomObjectStatus'
  >;
  /** client-node's KubeConfig, with client-node's clients only. */
  kubeConfig?: unknown;
}

/** What finding a Rollout reads through: the GET of one custom object. */
export interface RolloutReadingClients {
  custom: Pick<CustomObjectsApi, 'getNamespacedCustomObject'>;
}

/** client-node's options that make a patch a merge patch; the CustomObjectClient sends no other kind. */
async function mergePatchOptions(clients: RolloutVerbClients) {
  if (clients.kubeConfig === undefined) return undefined;
  const { MERGE_PATCH } = await import('../kube/client.ts');
  return MERGE_PATCH;
}

/** What a verb changed, for the CLI to print: the patches sent (empty when there was nothing to do). */
export interface RolloutCommandResult {
  rollout: RolloutKey;
  specPatch?: Record<string, unknown>;
  statusPatch?: Record<string, unknown>;
  /** One line a human reads, e.g. "rollout web promoted (skipped step 2)". */
  summary: string;
}

interface LiveRollout {
  metadata?: { resourceVersion?: string };
  spec?: { paused?: boolean; strategy?: { canary?: { steps?: unknown[] } } };
  status?: {
    pauseConditions?: unknown[] | null;
    currentStepIndex?: number;
    currentPodHash?: string;
    stableRS?: string;
    abort?: boolean;
  };
}

const MAX_CONFLICT_RETRIES = 5;

/** Which group a verb acts in: the one named, else wherever the Rollout is (see {@link findRollout}). */
export interface RolloutVerbOptions {
  group?: DrivenGroup | undefined;
}

/** A Rollout as found, with the API it lives in (the patches go there). */
interface FoundRollout {
  api: DrivenApi;
  live: LiveRollout;
}

/**
 * Finds the Rollout `key`: in `group` when given; else in rollgate.dev and argoproj.io both, so an Argo
 * user types `rollgate promote web` as they typed `kubectl argo rollouts promote web`. A name in both
 * groups is ambiguous: {@link AmbiguousRolloutError} asks for `--group` rather than guess. A group whose
 * CRD is not installed holds nothing (404).
 */
export async function findRollout(
  clients: RolloutReadingClients,
  key: RolloutKey,
  group?: DrivenGroup,
): Promise<FoundRollout> {
  const apis = group === undefined ? [ROLLGATE_API, ARGO_API] : [drivenApiOf(group)];
  // Both groups at once: one round trip, not two. A failure is thrown as when they were read in turn
  // (rollgate.dev's first).
  const reads = await Promise.allSettled(apis.map((api) => readRollout(clients, api, key)));
  const found: FoundRollout[] = [];
  for (const [index, read] of reads.entries()) {
    if (read.status === 'rejected') throw read.reason;
    if (read.value !== undefined) found.push({ api: apis[index]!, live: read.value });
  }
  if (found.length === 0) throw new RolloutNotFoundError(key, group);
  if (found.length > 1) throw new AmbiguousRolloutError(key);
  return found[0]!;
}

/**
 * The Rollout as the API server has it, or undefined (404, also when the group's CRD is not installed).
 * Read here rather than through ObservedStateReader, whose module brings the planner and the Rollout
 * schema: a verb only reads and patches, and loading them was a third of its start-up.
 */
async function readRollout(
  clients: RolloutReadingClients,
  api: DrivenApi,
  key: RolloutKey,
): Promise<LiveRollout | undefined> {
  try {
    return (await kubeCall({ verb: 'get', kind: 'Rollout', ...key }, () =>
      clients.custom.getNamespacedCustomObject({
        group: api.group,
        version: api.version,
        namespace: key.namespace,
        plural: api.plurals.rollouts,
        name: key.name,
      }),
    )) as LiveRollout;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Merge-patches the Rollout itself or its status subresource (the two halves of a verb's change). A
 * merge patch names only the fields the verb sets, so under Argo CD or Flux the verb owns those
 * (field manager `rollgate-verb`) and nothing of the spec the engine applies.
 */
async function patchRollout(
  clients: RolloutVerbClients,
  api: DrivenApi,
  key: RolloutKey,
  part: 'spec' | 'status',
  body: Record<string, unknown>,
): Promise<void> {
  const mergePatch = await mergePatchOptions(clients);
  // The arguments are written out in each call: the install test derives the RBAC rules from them.
  if (part === 'spec') {
    await kubeCall({ verb: 'patch', kind: 'Rollout', ...key }, () =>
      clients.custom.patchNamespacedCustomObject(
        {
          group: api.group,
          version: api.version,
          plural: api.plurals.rollouts,
          ...key,
          body,
          fieldManager: VERB_FIELD_MANAGER,
        },
        mergePatch,
      ),
    );
  } else {
    await kubeCall({ verb: 'patch', kind: 'Rollout', ...key, subresource: 'status' }, () =>
      clients.custom.patchNamespacedCustomObjectStatus(
        {
          group: api.group,
          version: api.version,
          plural: api.plurals.rollouts,
          ...key,
          body,
          fieldManager: VERB_FIELD_MANAGER,
        },
        mergePatch,
      ),
    );
  }
}

/** The named Rollout does not exist. */
export class RolloutNotFoundError extends Error {
  override readonly name = 'RolloutNotFoundError';
  readonly code = 'kube.rollout_not_found';
  constructor(
    readonly rollout: RolloutKey,
    readonly group?: DrivenGroup,
  ) {
    super(
      `rollout ${rollout.namespace}/${rollout.name} not found${group === undefined ? '' : ` in ${group}`}`,
    );
  }
}

/** The name is a Rollout in both rollgate.dev and argoproj.io: the verb needs `--group`. */
export class AmbiguousRolloutError extends Error {
  override readonly name = 'AmbiguousRolloutError';
  readonly code = 'kube.rollout_ambiguous';
  constructor(readonly rollout: RolloutKey) {
    super(
      `rollout ${rollout.namespace}/${rollout.name} exists in both rollgate.dev and argoproj.io: say which with --group rollgate.dev or --group argoproj.io`,
    );
  }
}

/**
 * Runs read → decide patches → send, re-reading on 409 when a patch depends on what was read (a step
 * index), so two people promoting at once skip one step each, never the same step twice.
 */
async function withRead(
  clients: RolloutVerbClients,
  key: RolloutKey,
  decide: (live: LiveRollout) => Omit<RolloutCommandResult, 'rollout'>,
  group?: DrivenGroup,
): Promise<RolloutCommandResult> {
  for (let attempt = 0; ; attempt += 1) {
    const { api, live } = await findRollout(clients, key, group);
    const decision = decide(live);
    try {
      if (decision.statusPatch) await patchRollout(clients, api, key, 'status', decision.statusPatch);
      if (decision.specPatch) await patchRollout(clients, api, key, 'spec', decision.specPatch);
      return { rollout: key, ...stripPreconditions(decision) };
    } catch (err) {
      if ((err as { code?: string }).code !== 'kube.conflict' || attempt >= MAX_CONFLICT_RETRIES) throw err;
    }
  }
}

function stripPreconditions(
  decision: Omit<RolloutCommandResult, 'rollout'>,
): Omit<RolloutCommandResult, 'rollout'> {
  const strip = (patch: Record<string, unknown> | undefined): Record<string, unknown> | undefined => {
    if (patch === undefined) return undefined;
    const { metadata: _metadata, ...rest } = patch;
    return rest;
  };
  const out: Omit<RolloutCommandResult, 'rollout'> = { summary: decision.summary };
  const spec = strip(decision.specPatch);
  const status = strip(decision.statusPatch);
  if (spec) out.specPatch = spec;
  if (status) out.statusPatch = status;
  return out;
}

/**
 * `promote`: as Argo's plugin. `full` sets status.promoteFull (when the canary is not already stable).
 * Otherwise: unpause spec.paused if set; clear status.pauseConditions if any; with no pause condition,
 * skip the current canary step (currentStepIndex + 1, capped at the step count).
 */
export async function promoteRollout(
  clients: RolloutVerbClients,
  key: RolloutKey,
  options: { full?: boolean } & RolloutVerbOptions = {},
): Promise<RolloutCommandResult> {
  return withRead(
    clients,
    key,
    (live) => {
      const resourceVersion = live.metadata?.resourceVersion;
      const status = live.status ?? {};
      if (options.full) {
        if (status.currentPodHash !== undefined && status.currentPodHash === status.stableRS)
          return { summary: `rollout ${key.name} is already fully promoted` };
        return {
          statusPatch: { status: { promoteFull: true } },
          specPatch: live.spec?.paused ? { spec: { paused: false } } : undefined,
          summary: `rollout ${key.name} fully promoted`,
        };
      }
      const specPatch = live.spec?.paused ? { spec: { paused: false } } : undefined;
      if ((status.pauseConditions ?? []).length > 0) {
        return {
          specPatch,
          statusPatch: { metadata: { resourceVersion }, status: { pauseConditions: null } },
          summary: `rollout ${key.name} promoted (pause cleared)`,
        };
      }
      const steps = live.spec?.strategy?.canary?.steps ?? [];
      if (steps.length > 0) {
        const index = Math.min(status.currentStepIndex ?? 0, steps.length);
        const next = Math.min(index + 1, steps.length);
        return {
          specPatch,
          statusPatch: { metadata: { resourceVersion }, status: { currentStepIndex: next } },
          summary: `rollout ${key.name} promoted (step ${index} skipped)`,
        };
      }
      return {
        specPatch,
        summary: specPatch ? `rollout ${key.name} unpaused` : `rollout ${key.name}: nothing to promote`,
      };
    },
    options.group,
  );
}

/**
 * A verb whose patch does not depend on what was read (abort, retry, restart, pause, resume): the
 * read is still made, so a missing Rollout is a RolloutNotFoundError rather than a 404 from the patch.
 */
async function sendFixedPatch(
  clients: RolloutVerbClients,
  key: RolloutKey,
  patch: Pick<RolloutCommandResult, 'specPatch'> | Pick<RolloutCommandResult, 'statusPatch'>,
  summary: string,
  options: RolloutVerbOptions,
): Promise<RolloutCommandResult> {
  return withRead(
    clients,
    key,
    () => ({ ...patch, summary: `rollout ${key.name} ${summary}` }),
    options.group,
  );
}

/** `abort`: status.abort = true (the reconciler records the abort, then sends traffic to stable). */
export async function abortRollout(
  clients: RolloutVerbClients,
  key: RolloutKey,
  options: RolloutVerbOptions = {},
): Promise<RolloutCommandResult> {
  return sendFixedPatch(clients, key, { statusPatch: { status: { abort: true } } }, 'aborted', options);
}

/** `retry`: status.abort = false (the reconciler restarts the steps of the current revision). */
export async function retryRollout(
  clients: RolloutVerbClients,
  key: RolloutKey,
  options: RolloutVerbOptions = {},
): Promise<RolloutCommandResult> {
  return sendFixedPatch(clients, key, { statusPatch: { status: { abort: false } } }, 'retried', options);
}

/** `restart`: spec.restartAt = now (RFC 3339, seconds): pods created before it are replaced. */
export async function restartRollout(
  clients: RolloutVerbClients,
  key: RolloutKey,
  clock: Clock,
  options: RolloutVerbOptions = {},
): Promise<RolloutCommandResult> {
  const restartAt = clock
    .now()
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z');
  return sendFixedPatch(
    clients,
    key,
    { specPatch: { spec: { restartAt } } },
    `restarts pods created before ${restartAt}`,
    options,
  );
}

/** `pause`: spec.paused = true. */
export async function pauseRollout(
  clients: RolloutVerbClients,
  key: RolloutKey,
  options: RolloutVerbOptions = {},
): Promise<RolloutCommandResult> {
  return sendFixedPatch(clients, key, { specPatch: { spec: { paused: true } } }, 'paused', options);
}

/** `resume`: spec.paused = false. */
export async function resumeRollout(
  clients: RolloutVerbClients,
  key: RolloutKey,
  options: RolloutVerbOptions = {},
): Promise<RolloutCommandResult> {
  return sendFixedPatch(clients, key, { specPatch: { spec: { paused: false } } }, 'resumed', options);
}
