// Blue-green: the write that points the active or the preview Service at a revision.
import type { Pass } from '../pass/pass.ts';
import type { RolloutAction } from '../rollout-action.ts';
import { selectedHash } from './blue-green-view.ts';

/**
 * The selector patch that makes `service` select pod-template hash `hash`, conditional on the
 * resourceVersion it was observed at; nothing when the Service is not configured, not observed, or
 * already selects `hash`.
 */
export function selectorPatch(pass: Pass, service: string | undefined, hash: string): RolloutAction[] {
  if (service === undefined || selectedHash(pass, service) === hash) return [];
  const observed = pass.context.observed.services.find((candidate) => candidate.name === service);
  if (observed === undefined) return [];
  return [
    {
      kind: 'patchServiceSelector',
      service,
      resourceVersion: observed.resourceVersion,
      podTemplateHash: hash,
    },
  ];
}
