// What the fleet planner asks the shell to do, as plain data; each states an absolute target.

/** Wake the sources of these clusters: the fleet now lets them apply the Rollout at `revision`. */
export interface ReleaseWaveAction {
  kind: 'releaseWave';
  wave: number;
  name: string;
  clusters: string[];
  revision: string;
}

/** A notification trigger fired once per transition (on-fleet-stopped). */
export interface NotifyAction {
  kind: 'notify';
  trigger: 'on-fleet-stopped';
  cluster: string;
  revision: string;
  step?: string;
  reason: string;
}

/** A Kubernetes Event on the Fleet. */
export interface EmitFleetEventAction {
  kind: 'emitEvent';
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export type FleetAction = ReleaseWaveAction | NotifyAction | EmitFleetEventAction;
