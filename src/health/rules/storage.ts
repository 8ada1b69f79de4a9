// Health rule for a PersistentVolumeClaim: bound to a volume, waiting for one, or lost.
import { stringAt } from '../live-fields.ts';
import type { HealthRule } from '../object-health.ts';

/** Bound → Healthy; Lost (its volume is gone) → Degraded; Pending or no phase yet → Progressing. */
export const persistentVolumeClaimHealth: HealthRule = (live) => {
  const phase = stringAt(live, 'status', 'phase');
  if (phase === 'Bound') return { status: 'Healthy', message: '' };
  if (phase === 'Lost') return { status: 'Degraded', message: 'the bound volume no longer exists' };
  return { status: 'Progressing', message: 'waiting for a volume to bind' };
};

export const STORAGE_RULES: ReadonlyArray<readonly [string, HealthRule]> = [
  ['/PersistentVolumeClaim', persistentVolumeClaimHealth],
];
