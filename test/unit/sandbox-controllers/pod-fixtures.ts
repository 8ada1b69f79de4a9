// Test fixtures for the sandbox controller tests: pods at a fixed creation time, and a time helper.

import type { KubeObject } from '../../../src/sandbox/controllers/index.ts';

/** Creation time of every fixture pod. */
export const t0 = Date.parse('2026-01-01T00:00:00Z');

/** The instant `ms` after t0. */
export function at(ms: number): Date {
  return new Date(t0 + ms);
}

/** A pod named web-abc created at t0 with one container `app` (image app:1.0 unless given). */
export function aPod(
  annotations: Record<string, string> = {},
  containers: Array<Record<string, unknown>> = [{ name: 'app', image: 'app:1.0' }],
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-abc',
      namespace: 'default',
      uid: 'uid-1',
      creationTimestamp: '2026-01-01T00:00:00Z',
      annotations,
    },
    spec: { containers },
  };
}

/** The named condition of a status. */
export function conditionOf(
  status: Record<string, unknown>,
  type: string,
): Record<string, unknown> | undefined {
  const list = status.conditions as Array<Record<string, unknown>> | undefined;
  return list?.find((condition) => condition.type === type);
}

/** The first container status. */
export function firstContainer(status: Record<string, unknown>): Record<string, unknown> {
  const list = status.containerStatuses as Array<Record<string, unknown>>;
  const first = list[0];
  if (first === undefined) throw new Error('no container status');
  return first;
}

/** The waiting/running/terminated state of the first container. */
export function stateOf(status: Record<string, unknown>): Record<string, Record<string, unknown>> {
  return firstContainer(status).state as Record<string, Record<string, unknown>>;
}
