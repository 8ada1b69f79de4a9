// Blue-green sub-step: the preview Service selects the new revision once its ReplicaSet exists.
import { amend, type Pass } from '../pass/pass.ts';
import { blueGreenOf } from './blue-green-view.ts';
import { selectorPatch } from './service-selector-patch.ts';

/**
 * Points strategy.blueGreen.previewService at the new revision, from the pass after the one that created
 * its ReplicaSet (its pods need not be available: the preview is for looking, not for live traffic).
 * Nothing without a preview Service or when it already selects it; never ends the pass.
 */
export function switchPreviewService(pass: Pass): Pass {
  if (pass.revision.current === undefined) return pass;
  return amend(pass, { actions: selectorPatch(pass, blueGreenOf(pass).previewService, pass.revision.hash) });
}
