// Git-approved gates: an annotation in the Rollout manifest that promotes exactly one indefinite pause.

/** `<podTemplateHash>/<stepIndex>`: approves that revision's pause at that step, and nothing else. */
export const APPROVE_ANNOTATION = 'rollgate.dev/approve';

/** The approval written in the Rollout's annotations, if any (trimmed; empty counts as none). */
export function readApproval(annotations: Record<string, string> | undefined): string | undefined {
  const value = annotations?.[APPROVE_ANNOTATION]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** The annotation value that approves `hash`'s pause at `stepIndex`. */
export function approvalFor(hash: string, stepIndex: number): string {
  return `${hash}/${stepIndex}`;
}
