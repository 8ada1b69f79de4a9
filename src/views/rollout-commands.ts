// The user verbs on a Rollout (promote, abort, retry, restart, pause, resume): the same spec/status patches Argo's kubectl plugin sends.
import type { Clock } from '../clock/clock.ts';
import { ROLLGATE_API_GROUP } from '../manifest/api-version.ts';
import { FIELD_MANAGER, MERGE_PATCH, type KubeClients } from '../kube/client.ts';
import { kubeCall } from '../kube/errors.ts';
import { ObservedStateReader, type RolloutKey } from '../reconciler/observed-state-reader.ts';

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

const VERSION = 'v1alpha1';
const PLURAL = 'rollouts';
const MAX_CONFLICT_RETRIES = 5;

async function readRollout(clients: KubeClients, key: RolloutKey): Promise<LiveRollout> {
  const live = await new ObservedStateReader(clients).readRolloutObject(key);
  if (live === undefined) throw new RolloutNotFoundError(key);
  return live as LiveRollout;
}

/** Merge-patches the Rollout itself or its status subresource (the two halves of a verb's change). */
async function patchRollout(
  clients: KubeClients,
  key: RolloutKey,
  part: 'spec' | 'status',
  body: Record<string, unknown>,
): Promise<void> {
  // The arguments are written out in each call: the install test derives the RBAC rules from them.
  if (part === 'spec') {
    await kubeCall({ verb: 'patch', kind: 'Rollout', ...key }, () =>
      clients.custom.patchNamespacedCustomObject(
        {
          group: ROLLGATE_API_GROUP,
          version: VERSION,
          plural: PLURAL,
          ...key,
          body,
          fieldManager: FIELD_MANAGER,
        },
        MERGE_PATCH,
      ),
    );
  } else {
    await kubeCall({ verb: 'patch', kind: 'Rollout', ...key, subresource: 'status' }, () =>
      clients.custom.patchNamespacedCustomObjectStatus(
        {
          group: ROLLGATE_API_GROUP,
          version: VERSION,
          plural: PLURAL,
          ...key,
          body,
          fieldManager: FIELD_MANAGER,
        },
        MERGE_PATCH,
      ),
    );
  }
}

/** The named Rollout does not exist. */
export class RolloutNotFoundError extends Error {
  override readonly name = 'RolloutNotFoundError';
  readonly code = 'kube.rollout_not_found';
  constructor(readonly rollout: RolloutKey) {
    super(`rollout ${rollout.namespace}/${rollout.name} not found`);
  }
}

/**
 * Runs read → decide patches → send, re-reading on 409 when a patch depends on what was read (a step
 * index), so two people promoting at once skip one step each, never the same step twice.
 */
async function withRead(
  clients: KubeClients,
  key: RolloutKey,
  decide: (live: LiveRollout) => Omit<RolloutCommandResult, 'rollout'>,
): Promise<RolloutCommandResult> {
  for (let attempt = 0; ; attempt += 1) {
    const live = await readRollout(clients, key);
    const decision = decide(live);
    try {
      if (decision.statusPatch) await patchRollout(clients, key, 'status', decision.statusPatch);
      if (decision.specPatch) await patchRollout(clients, key, 'spec', decision.specPatch);
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
  clients: KubeClients,
  key: RolloutKey,
  options: { full?: boolean } = {},
): Promise<RolloutCommandResult> {
  return withRead(clients, key, (live) => {
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
  });
}

/**
 * A verb whose patch does not depend on what was read (abort, retry, restart, pause, resume): the
 * read is still made, so a missing Rollout is a RolloutNotFoundError rather than a 404 from the patch.
 */
async function sendFixedPatch(
  clients: KubeClients,
  key: RolloutKey,
  patch: Pick<RolloutCommandResult, 'specPatch'> | Pick<RolloutCommandResult, 'statusPatch'>,
  summary: string,
): Promise<RolloutCommandResult> {
  return withRead(clients, key, () => ({ ...patch, summary: `rollout ${key.name} ${summary}` }));
}

/** `abort`: status.abort = true (the reconciler records the abort, then sends traffic to stable). */
export async function abortRollout(clients: KubeClients, key: RolloutKey): Promise<RolloutCommandResult> {
  return sendFixedPatch(clients, key, { statusPatch: { status: { abort: true } } }, 'aborted');
}

/** `retry`: status.abort = false (the reconciler restarts the steps of the current revision). */
export async function retryRollout(clients: KubeClients, key: RolloutKey): Promise<RolloutCommandResult> {
  return sendFixedPatch(clients, key, { statusPatch: { status: { abort: false } } }, 'retried');
}

/** `restart`: spec.restartAt = now (RFC 3339, seconds): pods created before it are replaced. */
export async function restartRollout(
  clients: KubeClients,
  key: RolloutKey,
  clock: Clock,
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
  );
}

/** `pause`: spec.paused = true. */
export async function pauseRollout(clients: KubeClients, key: RolloutKey): Promise<RolloutCommandResult> {
  return sendFixedPatch(clients, key, { specPatch: { spec: { paused: true } } }, 'paused');
}

/** `resume`: spec.paused = false. */
export async function resumeRollout(clients: KubeClients, key: RolloutKey): Promise<RolloutCommandResult> {
  return sendFixedPatch(clients, key, { specPatch: { spec: { paused: false } } }, 'resumed');
}
