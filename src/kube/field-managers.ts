// Who Rollgate's writes are recorded as in managedFields: the processes and the people using a verb.

/**
 * The field manager of Rollgate's writes: the sync's server-side apply (operation Apply), the reconciler's
 * status and the objects it creates (operation Update). Never an engine's: under Argo CD or Flux the
 * spec they apply stays theirs (docs/controller-mode.md, "Field ownership").
 */
export const FIELD_MANAGER = 'rollgate';

/**
 * The field manager of a user's verb on a Rollout (promote, abort, pause, restart…): the fields it sets
 * (`spec.paused`, `spec.restartAt`, `status.abort`, …) show in managedFields as a person's act, apart from
 * what the reconciler writes, as `kubectl-argo-rollouts` shows Argo's plugin.
 */
export const VERB_FIELD_MANAGER = 'rollgate-verb';
