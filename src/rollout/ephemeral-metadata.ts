// Ephemeral pod metadata (canary/stable, preview/active): the labels and annotations a revision's template and pods carry for the role it plays now.
import type { PodMetadata } from '../manifest/kube-meta.ts';
import type { RolloutStrategy } from '../manifest/rollout.ts';
import type { ObservedPod, ObservedReplicaSet } from './observed-state.ts';
import type { Pass } from './pass/pass.ts';
import { canonicalJson } from './pod-template-hash.ts';
import { EPHEMERAL_METADATA_ANNOTATION } from './replica-set-template.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  type CreateReplicaSetAction,
  type PatchPodMetadataAction,
  type PodMetadataChange,
  type RolloutAction,
  type SetReplicaSetPodMetadataAction,
} from './rollout-action.ts';
import type { RolloutPlan } from './rollout-plan.ts';

/** What a ReplicaSet is to the rollout right now: the revision rolled out, the stable, or neither. */
export type PodRole = 'new' | 'stable' | 'other';

/** Which ReplicaSets play which role: the template's revision and status.stableRS (when it still exists). */
export interface PodRoles {
  revisionHash: string;
  stableHash: string | undefined;
}

/**
 * The role of the ReplicaSet with `hash`. A revision that is also the stable (a first deploy, a finished
 * rollout) is the stable: the stable's metadata is what it keeps once nothing is rolled out over it.
 */
export function roleOf(hash: string, roles: PodRoles): PodRole {
  if (hash === roles.stableHash) return 'stable';
  if (hash === roles.revisionHash) return roles.stableHash === undefined ? 'stable' : 'new';
  return 'other';
}

/**
 * The metadata the strategy asks for a role: canaryMetadata / stableMetadata, or previewMetadata /
 * activeMetadata. Undefined for `other` (what was injected comes off) and when the field is not set.
 */
export function ephemeralMetadataFor(strategy: RolloutStrategy, role: PodRole): PodMetadata | undefined {
  if (role === 'other') return undefined;
  if (strategy.canary !== undefined)
    return role === 'new' ? strategy.canary.canaryMetadata : strategy.canary.stableMetadata;
  if (strategy.blueGreen !== undefined)
    return role === 'new' ? strategy.blueGreen.previewMetadata : strategy.blueGreen.activeMetadata;
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringsOf(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/**
 * What a ReplicaSet's `rollout.argoproj.io/ephemeral-metadata` annotation says was injected into its
 * template (by Rollgate or by Argo Rollouts, which writes the same annotation); undefined when absent or
 * not JSON (then nothing is known to be ours to remove).
 */
export function recordedMetadata(rs: Pick<ObservedReplicaSet, 'annotations'>): PodMetadata | undefined {
  const text = rs.annotations[EPHEMERAL_METADATA_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isRecord(parsed)) return undefined;
    return { labels: stringsOf(parsed.labels), annotations: stringsOf(parsed.annotations) };
  } catch {
    return undefined;
  }
}

/** The annotation's value recording `desired`; null (remove it) when nothing is injected. */
export function recordOf(desired: PodMetadata | undefined): string | null {
  if (desired === undefined) return null;
  const { labels, annotations } = desired;
  return canonicalJson({
    ...(labels !== undefined ? { labels } : {}),
    ...(annotations !== undefined ? { annotations } : {}),
  });
}

function mapChange(
  current: Readonly<Record<string, string>>,
  recorded: Readonly<Record<string, string>> | undefined,
  desired: Readonly<Record<string, string>> | undefined,
): Record<string, string | null> {
  const change: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(desired ?? {})) if (current[key] !== value) change[key] = value;
  // Only what was injected comes off: keys another controller (a sidecar injector) set are left alone.
  for (const key of Object.keys(recorded ?? {}))
    if (desired?.[key] === undefined && current[key] !== undefined) change[key] = null;
  return change;
}

/**
 * The change that takes labels and annotations from `current` to `desired`, removing what `recorded` says
 * was injected before and is no longer wanted. Empty when `current` is already there.
 */
export function metadataChange(
  current: { labels?: Readonly<Record<string, string>>; annotations?: Readonly<Record<string, string>> },
  recorded: PodMetadata | undefined,
  desired: PodMetadata | undefined,
): PodMetadataChange {
  return {
    labels: mapChange(current.labels ?? {}, recorded?.labels, desired?.labels),
    annotations: mapChange(current.annotations ?? {}, recorded?.annotations, desired?.annotations),
  };
}

/** True when the change changes nothing. */
export function isEmptyChange(change: PodMetadataChange): boolean {
  return Object.keys(change.labels).length === 0 && Object.keys(change.annotations).length === 0;
}

/**
 * The create with `desired` merged into its template's metadata and recorded in the ephemeral-metadata
 * annotation, so the ReplicaSet's first pods carry it. The ReplicaSet's own labels and the hash label stay
 * as they are (validate refuses metadata that names the hash label).
 */
export function withEphemeralMetadata(
  create: CreateReplicaSetAction,
  desired: PodMetadata | undefined,
): CreateReplicaSetAction {
  const record = recordOf(desired);
  if (desired === undefined || record === null) return create;
  const template = create.template as { metadata?: { labels?: unknown; annotations?: unknown } };
  const metadata = template.metadata ?? {};
  const labels = {
    ...stringsOf(metadata.labels),
    ...(desired.labels ?? {}),
    [POD_TEMPLATE_HASH_LABEL]: create.podTemplateHash,
  };
  const annotations = { ...stringsOf(metadata.annotations), ...(desired.annotations ?? {}) };
  return {
    ...create,
    template: {
      ...template,
      metadata: { ...metadata, labels, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
    },
    annotations: { ...create.annotations, [EPHEMERAL_METADATA_ANNOTATION]: record },
  };
}

function templateMetadataOf(rs: ObservedReplicaSet): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  const template = rs.template as { metadata?: { labels?: unknown; annotations?: unknown } };
  return {
    labels: stringsOf(template.metadata?.labels),
    annotations: stringsOf(template.metadata?.annotations),
  };
}

function sameRecord(recorded: PodMetadata | undefined, desired: PodMetadata | undefined): boolean {
  const canonical = (m: PodMetadata | undefined) =>
    m === undefined ? undefined : canonicalJson({ labels: m.labels ?? {}, annotations: m.annotations ?? {} });
  return canonical(recorded) === canonical(desired);
}

/** What the ephemeral metadata needs from one pass. */
export interface EphemeralMetadataInput {
  strategy: RolloutStrategy;
  roles: PodRoles;
  replicaSets: readonly ObservedReplicaSet[];
  pods: readonly ObservedPod[];
  /** The ReplicaSets the pass writes already: theirs waits for the next pass, which plans from their new version. */
  writtenReplicaSets: ReadonlySet<string>;
}

/**
 * The writes that give each of the rollout's ReplicaSets the metadata of its role, then its running pods
 * (as Argo: template first, so pods created in between carry it too; pods in place, never restarted):
 * the revision rolled out gets canaryMetadata / previewMetadata while a stable runs beside it, the stable
 * stableMetadata / activeMetadata, every other ReplicaSet loses what was injected. When the revision
 * becomes the stable, its metadata is swapped on the next pass. Pods whose metadata was not read, and
 * ReplicaSets scaled to 0, are left alone.
 */
export function planEphemeralMetadata(input: EphemeralMetadataInput): RolloutAction[] {
  const actions: RolloutAction[] = [];
  for (const rs of input.replicaSets) {
    if (!rs.controlledByRollout || input.writtenReplicaSets.has(rs.name)) continue;
    const desired = ephemeralMetadataFor(input.strategy, roleOf(rs.podTemplateHash, input.roles));
    const recorded = recordedMetadata(rs);
    const template = metadataChange(templateMetadataOf(rs), recorded, desired);
    if (!isEmptyChange(template) || !sameRecord(recorded, desired)) {
      const update: SetReplicaSetPodMetadataAction = {
        kind: 'setReplicaSetPodMetadata',
        name: rs.name,
        resourceVersion: rs.resourceVersion,
        template,
        recorded: recordOf(desired),
      };
      actions.push(update);
    }
    if (rs.replicas === 0) continue;
    for (const pod of input.pods) {
      if (pod.podTemplateHash !== rs.podTemplateHash || pod.labels === undefined) continue;
      const change = metadataChange(pod, recorded, desired);
      if (isEmptyChange(change)) continue;
      const patch: PatchPodMetadataAction = { kind: 'patchPodMetadata', name: pod.name, change };
      actions.push(patch);
    }
  }
  return actions;
}

/**
 * Adds {@link planEphemeralMetadata}'s writes to a pass's plan: after the pass's own writes (which they
 * never hold up) and before its Events. A ReplicaSet the pass writes already is left to the next pass.
 */
export function withEphemeralMetadataSync(pass: Pass, plan: RolloutPlan): RolloutPlan {
  const { context, revision } = pass;
  const writtenReplicaSets = new Set(
    plan.actions.flatMap((action) =>
      action.kind === 'scaleReplicaSet' || action.kind === 'deleteReplicaSet' ? [action.name] : [],
    ),
  );
  const sync = planEphemeralMetadata({
    strategy: context.rollout.spec.strategy,
    roles: { revisionHash: revision.hash, stableHash: revision.stableHash },
    replicaSets: context.observed.replicaSets,
    pods: context.observed.pods,
    writtenReplicaSets,
  });
  if (sync.length === 0) return plan;
  const events = plan.actions.filter((a) => a.kind === 'emitEvent');
  const writes = plan.actions.filter((a) => a.kind !== 'emitEvent');
  return { ...plan, actions: [...writes, ...sync, ...events] };
}
