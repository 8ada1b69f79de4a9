// A fleet stopped (a canary aborted in one of its clusters): the event, its trigger and its built-in template.

/**
 * What the fleet controller reports when a Fleet stops: which Fleet, the cluster where the canary aborted,
 * the revision it was walking, the step it aborted at, and why. Plain data (a queue job carries it).
 */
export interface FleetStopped {
  /** The Fleet's metadata.name. */
  fleet: string;
  /** The Fleet's namespace (in the cluster Rollgate runs in). */
  namespace: string;
  /** The cluster whose canary aborted. */
  cluster: string;
  /** The Git commit the Fleet was walking. */
  revision: string;
  /** The canary step it aborted at, as the Fleet's status shows it (`2/3`: the second of three); empty when unknown. */
  step: string;
  /** Why, in the Rollout's words (its status message). */
  reason: string;
}

export const FLEET_TRIGGERS = ['on-fleet-stopped'] as const;
export type FleetTrigger = (typeof FLEET_TRIGGERS)[number];

/** The Fleet as templates see it (`.fleet.name`, `.fleet.cluster`, …). */
export interface FleetTemplateData {
  name: string;
  namespace: string;
  cluster: string;
  revision: string;
  step: string;
  reason: string;
  [field: string]: unknown;
}

export function fleetTemplateData(stopped: FleetStopped): FleetTemplateData {
  return {
    name: stopped.fleet,
    namespace: stopped.namespace,
    cluster: stopped.cluster,
    revision: stopped.revision,
    step: stopped.step,
    reason: stopped.reason,
  };
}

/**
 * The identity of a stop: one Fleet stops once per revision (a fixed commit is a new revision, and a new
 * stop of it a new notification); the same stop reported twice (two processes, a restart) is one key.
 */
export function fleetStoppedKey(stopped: FleetStopped): string {
  return [
    `fleet:${stopped.namespace}/${stopped.fleet}`,
    stopped.revision,
    'on-fleet-stopped',
    stopped.cluster,
    stopped.step,
  ].join('|');
}

/**
 * The built-in fleet trigger and its template, as ConfigMap entries (replaced by a key of the same name):
 * the message names the Fleet, the cluster and step where the canary aborted, the revision, and why.
 */
export const FLEET_TRIGGER_CATALOG: Readonly<Record<string, string>> = {
  'trigger.on-fleet-stopped': '- send: [fleet-stopped]\n',
  'template.fleet-stopped': [
    'message: |',
    '  Fleet {{.fleet.namespace}}/{{.fleet.name}} stopped: the canary of revision {{.fleet.revision}} aborted in cluster {{.fleet.cluster}} at step {{.fleet.step}}: {{.fleet.reason}}',
    '  Later waves do not get this revision; a newer commit starts the fleet again from its first wave.',
    '',
  ].join('\n'),
};
