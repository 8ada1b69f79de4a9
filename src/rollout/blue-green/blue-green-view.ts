// What the blue-green sub-steps derive from a pass: settings, where each Service points, targets, run names.
import { blueGreenWithDefaults, type BlueGreenStrategyWithDefaults } from '../../manifest/rollout.ts';
import { countRestartedReadyPods } from '../failing-pods.ts';
import type { ObservedReplicaSet } from '../observed-state.ts';
import type { Pass } from '../pass/pass.ts';
import { analysisRunName } from '../plan-analysis.ts';
import { countOf } from '../replica-sets.ts';
import { POD_TEMPLATE_HASH_LABEL } from '../rollout-action.ts';

/** Argo's pause reason while a blue-green rollout waits to be promoted. */
export const BLUE_GREEN_PAUSE = 'BlueGreenPause';

/**
 * status.blueGreen as Rollgate writes it (Argo's field names). `scaleUpPreviewCheckPoint` is set once the
 * revision passed its gates (pre-promotion analysis, pause): from then on it is scaled to full and
 * switched, and a restart of Rollgate does not pause it again. A new revision, an abort or completion
 * resets it.
 */
export interface BlueGreenStatus {
  activeSelector?: string;
  previewSelector?: string;
  scaleUpPreviewCheckPoint?: boolean;
}

/** strategy.blueGreen with defaults (a blue-green pass exists only when it is set). */
export function blueGreenOf(pass: Pass): BlueGreenStrategyWithDefaults {
  const blueGreen = pass.context.rollout.spec.strategy.blueGreen;
  if (blueGreen === undefined) throw new Error('a blue-green pass needs strategy.blueGreen');
  return blueGreenWithDefaults(blueGreen);
}

/** The stable ReplicaSet of a blue-green pass (one in progress exists only when there is one). */
export function stableOf(pass: Pass): ObservedReplicaSet {
  const stable = pass.revision.stable;
  if (stable === undefined) throw new Error('a blue-green pass needs a stable ReplicaSet');
  return stable;
}

export function stableHashOf(pass: Pass): string {
  return pass.revision.stableHash ?? pass.revision.hash;
}

/** The pod-template hash the named Service selects now, if it was observed and selects one. */
export function selectedHash(pass: Pass, serviceName: string | undefined): string | undefined {
  if (serviceName === undefined) return undefined;
  const service = pass.context.observed.services.find((candidate) => candidate.name === serviceName);
  const hash = service?.selector[POD_TEMPLATE_HASH_LABEL];
  return hash === undefined || hash === '' ? undefined : hash;
}

/** The hash the active Service selects now. */
export function activeHashOf(pass: Pass): string | undefined {
  return selectedHash(pass, blueGreenOf(pass).activeService);
}

/** The active Service already selects the revision being rolled out. */
export function switched(pass: Pass): boolean {
  return activeHashOf(pass) === pass.revision.hash;
}

/** The live status.blueGreen. */
export function liveBlueGreen(pass: Pass): BlueGreenStatus {
  const live = pass.context.status.blueGreen;
  return typeof live === 'object' && live !== null ? (live as BlueGreenStatus) : {};
}

/** The revision passed its gates (or `promote --full` skips them); a new revision starts without. */
export function gatesPassed(pass: Pass): boolean {
  if (pass.state.promoteFull) return true;
  return !pass.revision.newRevision && liveBlueGreen(pass).scaleUpPreviewCheckPoint === true;
}

/** Pods the new ReplicaSet runs now: previewReplicaCount while in preview, spec.replicas once promoted. */
export function wantedReplicas(pass: Pass): number {
  const count = blueGreenOf(pass).previewReplicaCount;
  if (count === undefined || gatesPassed(pass) || switched(pass)) return pass.context.replicas;
  return Math.min(count, pass.context.replicas);
}

/** Available pods of the new revision that count (Ready pods that restarted are crash loops flapping). */
export function honestAvailable(pass: Pass): number {
  const { revision, context } = pass;
  return Math.max(
    0,
    countOf(revision.current).available - countRestartedReadyPods(context.observed.pods, revision.hash),
  );
}

/** The AnalysisRun of a promotion gate: `<rollout>-<hash>-<revision>-pre` / `-post`, as Argo names it. */
export function promotionRunName(pass: Pass, gate: 'pre' | 'post'): string {
  return analysisRunName(pass.context.name, pass.revision.hash, pass.revision.number, gate);
}

/** Where the named Service points after this pass's writes (a planned selector patch, else as observed). */
function selectorAfter(pass: Pass, serviceName: string | undefined): string | undefined {
  if (serviceName === undefined) return undefined;
  const patch = [...pass.actions]
    .reverse()
    .find((action) => action.kind === 'patchServiceSelector' && action.service === serviceName);
  return patch?.kind === 'patchServiceSelector' ? patch.podTemplateHash : selectedHash(pass, serviceName);
}

/** The status.blueGreen this pass records: the selectors as its writes leave them, and the checkpoint. */
export function blueGreenStatus(pass: Pass, checkpoint: boolean): Record<string, unknown> {
  const blueGreen = blueGreenOf(pass);
  const active = selectorAfter(pass, blueGreen.activeService);
  const preview = selectorAfter(pass, blueGreen.previewService);
  const {
    activeSelector: _a,
    previewSelector: _p,
    scaleUpPreviewCheckPoint: _c,
    ...rest
  } = liveBlueGreen(pass);
  return {
    ...rest,
    ...(active !== undefined ? { activeSelector: active } : {}),
    ...(preview !== undefined ? { previewSelector: preview } : {}),
    ...(checkpoint ? { scaleUpPreviewCheckPoint: true } : {}),
  };
}
