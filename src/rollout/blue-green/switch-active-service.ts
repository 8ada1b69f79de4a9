// Blue-green sub-step: the active Service switches to the promoted revision, in a pass of its own.
import { amend, event, type Pass } from '../pass/pass.ts';
import { activeHashOf, blueGreenOf, switched } from './blue-green-view.ts';
import { inProgress } from './in-progress-verdict.ts';
import { selectorPatch } from './service-selector-patch.ts';

/**
 * Before the switch, with the revision promoted and all its pods available: the active Service's selector
 * is patched to the new revision (event SwitchedActiveService) and the pass ends Progressing "switching
 * active Service …" with the checkpoint recorded; the next pass observes the switch.
 */
export function switchActiveService(pass: Pass): Pass {
  if (switched(pass)) return pass;
  const { activeService } = blueGreenOf(pass);
  const next = amend(pass, {
    actions: selectorPatch(pass, activeService, pass.revision.hash),
    events: [
      event(
        'Normal',
        'SwitchedActiveService',
        `Active Service ${activeService} switched from ${activeHashOf(pass) ?? '(none)'} to ${pass.revision.hash}`,
      ),
    ],
  });
  return inProgress(next, `switching active Service ${activeService}`, true);
}
