// The fleet planner: waves resolved, gates between waves, a stop that later waves never pass, a fix that resumes.
import { describe, expect, it } from 'vitest';
import type { FleetSpec } from '../../../src/manifest/fleet.ts';
import type { FleetStatus } from '../../../src/fleet/fleet-status.ts';
import type { ObservedClusterRollout } from '../../../src/fleet/observed-fleet.ts';
import { planFleet, type FleetPlan, type PlannedFleet } from '../../../src/fleet/plan-fleet.ts';
import { resolveWaves } from '../../../src/fleet/resolve-waves.ts';

const R1 = '1'.repeat(40);
const R2 = '2'.repeat(40);
const R3 = '3'.repeat(40);
const T0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number): Date => new Date(T0.getTime() + ms);
const CLUSTERS = ['staging', 'eu-west-1', 'us-east-1'];

const SPEC: FleetSpec = {
  rollout: { path: 'apps/web/rollout.yaml' },
  waves: [
    { name: 'canary', clusters: ['staging'] },
    { name: 'first-region', clusters: ['eu-west-1'] },
    { name: 'rest', rest: true },
  ],
};

const fleet = (
  status?: FleetStatus,
  spec: FleetSpec = SPEC,
  annotations?: Record<string, string>,
): PlannedFleet => ({
  name: 'web',
  namespace: 'rollgate-system',
  generation: 1,
  spec,
  ...(status ? { status } : {}),
  ...(annotations ? { annotations } : {}),
});

/** A Rollout in a cluster: healthy at a revision unless told otherwise. */
const ro = (
  cluster: string,
  revision: string,
  more: Partial<ObservedClusterRollout> = {},
): ObservedClusterRollout => ({
  cluster,
  reachable: true,
  present: true,
  revision,
  phase: 'Healthy',
  stepIndex: 3,
  stepCount: 3,
  ...more,
});

const plan = (
  given: {
    status?: FleetStatus;
    observed: ObservedClusterRollout[];
    spec?: FleetSpec;
    annotations?: Record<string, string>;
  },
  now = T0,
): FleetPlan =>
  planFleet({
    fleet: fleet(given.status, given.spec, given.annotations),
    registered: CLUSTERS,
    observed: given.observed,
    now,
  });

const released = (p: FleetPlan): Record<string, string | undefined> =>
  Object.fromEntries(p.status.clusters.map((c) => [c.name, c.released]));

describe('resolveWaves', () => {
  const names = Array.from({ length: 20 }, (_, i) => `edge-${String(i).padStart(2, '0')}`);
  it.each([
    {
      name: 'explicit lists, then 10 % of the remainder rounded up in order of name, then the rest',
      waves: [
        { name: 'a', clusters: ['edge-05'] },
        { name: 'b', percent: 10 },
        { name: 'c', rest: true },
      ],
      want: [
        ['edge-05'],
        ['edge-00', 'edge-01'],
        names.filter((n) => !['edge-05', 'edge-00', 'edge-01'].includes(n)),
      ],
    },
    {
      name: 'a percent of a later explicit wave is not taken twice',
      waves: [
        { name: 'a', percent: 1 },
        { name: 'b', clusters: ['edge-00'] },
      ],
      want: [['edge-01'], ['edge-00', ...names.slice(2)]],
    },
    {
      name: 'clusters no wave takes join the last wave',
      waves: [
        { name: 'a', clusters: ['edge-00'] },
        { name: 'b', percent: 5 },
      ],
      want: [['edge-00'], ['edge-01', ...names.slice(2)]],
    },
  ])('$name', ({ waves, want }) => {
    expect(resolveWaves(waves, [...names].reverse()).map((w) => w.clusters)).toEqual(want);
  });
});

describe('planFleet', () => {
  it('starts a new revision at wave 0 and holds the later waves at what they run', () => {
    const p = plan({
      observed: [
        ro('staging', R2, { phase: 'Paused', stepIndex: 1 }),
        ro('eu-west-1', R1),
        ro('us-east-1', R1),
      ],
    });
    expect(p.status).toMatchObject({ phase: 'Progressing', revision: R2, currentWave: 0 });
    expect(p.status.message).toBe('wave canary: staging Paused at step 2/3');
    expect(released(p)).toEqual({ staging: R2, 'eu-west-1': R1, 'us-east-1': R1 });
    expect(p.status.clusters.map((c) => c.phase)).toEqual(['Paused', 'Held', 'Held']);
    expect(p.actions.filter((a) => a.kind === 'releaseWave')).toEqual([]);
  });

  it('opens the next wave when every Rollout of the wave is Healthy at the revision', () => {
    const first = plan({
      observed: [
        ro('staging', R2, { phase: 'Progressing', stepIndex: 0 }),
        ro('eu-west-1', R1),
        ro('us-east-1', R1),
      ],
    });
    const p = plan(
      { status: first.status, observed: [ro('staging', R2), ro('eu-west-1', R1), ro('us-east-1', R1)] },
      at(5000),
    );
    expect(p.actions[0]).toEqual({
      kind: 'releaseWave',
      wave: 1,
      name: 'first-region',
      clusters: ['eu-west-1'],
      revision: R2,
    });
    expect(p.status).toMatchObject({ phase: 'Progressing', currentWave: 1 });
    expect(released(p)).toEqual({ staging: R2, 'eu-west-1': R2, 'us-east-1': R1 });
    expect(p.status.waves.map((w) => w.phase)).toEqual(['Healthy', 'Progressing', 'Pending']);
  });

  it('walks every wave in order and records the stable revision at the end', () => {
    let status: FleetStatus | undefined;
    const order: string[] = [];
    const live: Record<string, string> = { staging: R2, 'eu-west-1': R1, 'us-east-1': R1 };
    for (let pass = 0; pass < 8; pass++) {
      const p = plan({ status, observed: CLUSTERS.map((c) => ro(c, live[c]!)) }, at(pass * 1000));
      for (const action of p.actions)
        if (action.kind === 'releaseWave') {
          order.push(action.name);
          for (const c of action.clusters) live[c] = action.revision; // the woken source syncs
        }
      status = p.status;
    }
    expect(order).toEqual(['first-region', 'rest']);
    expect(status).toMatchObject({ phase: 'Healthy', stableRevision: R2, revision: R2 });
    expect(status?.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('soaks a healthy wave before the next opens, and says when to look again', () => {
    const spec = { ...SPEC, gates: { soak: '10m' } };
    const first = plan({ spec, observed: [ro('staging', R2), ro('eu-west-1', R1), ro('us-east-1', R1)] });
    expect(first.status.waves[0]?.phase).toBe('Soaking');
    expect(first.requeueAfterMs).toBe(600_000);
    const during = plan(
      { spec, status: first.status, observed: [ro('staging', R2), ro('eu-west-1', R1), ro('us-east-1', R1)] },
      at(599_000),
    );
    expect(during.actions.some((a) => a.kind === 'releaseWave')).toBe(false);
    expect(during.requeueAfterMs).toBe(1000);
    const after = plan(
      {
        spec,
        status: during.status,
        observed: [ro('staging', R2), ro('eu-west-1', R1), ro('us-east-1', R1)],
      },
      at(600_000),
    );
    expect(after.actions[0]).toMatchObject({ kind: 'releaseWave', name: 'first-region' });
  });

  it('waits for the approval annotation naming the next wave and this revision', () => {
    const spec = { ...SPEC, gates: { approval: true } };
    const observed = [ro('staging', R2), ro('eu-west-1', R1), ro('us-east-1', R1)];
    const waiting = plan({ spec, observed });
    expect(waiting.status.phase).toBe('Waiting');
    expect(waiting.status.message).toContain(`rollgate.dev/approve-wave: first-region@${R2}`);
    // An approval of another revision approves nothing.
    const stale = plan({
      spec,
      observed,
      status: waiting.status,
      annotations: { 'rollgate.dev/approve-wave': `first-region@${R1}` },
    });
    expect(stale.actions.some((a) => a.kind === 'releaseWave')).toBe(false);
    const approved = plan({
      spec,
      observed,
      status: waiting.status,
      annotations: { 'rollgate.dev/approve-wave': `first-region@${R2}` },
    });
    expect(approved.actions[0]).toMatchObject({ kind: 'releaseWave', name: 'first-region', revision: R2 });
  });

  it('stops when a canary aborts in any cluster: names cluster, revision, step and reason, notifies once, releases nothing more', () => {
    const walking: FleetStatus = plan({
      status: plan({ observed: [ro('staging', R2), ro('eu-west-1', R1), ro('us-east-1', R1)] }).status,
      observed: [ro('staging', R2), ro('eu-west-1', R1), ro('us-east-1', R1)],
    }).status;
    const observed = [
      ro('staging', R2),
      ro('eu-west-1', R2, {
        phase: 'Degraded',
        aborted: true,
        stepIndex: 1,
        message: 'ProgressDeadlineExceeded: ImagePullBackOff',
      }),
      ro('us-east-1', R1),
    ];
    const p = plan({ status: walking, observed }, at(60_000));
    expect(p.status.phase).toBe('Stopped');
    expect(p.status.stoppedBy).toEqual({
      cluster: 'eu-west-1',
      revision: R2,
      step: '2/3',
      reason: 'ProgressDeadlineExceeded: ImagePullBackOff',
    });
    expect(p.actions.filter((a) => a.kind === 'notify')).toEqual([
      {
        kind: 'notify',
        trigger: 'on-fleet-stopped',
        cluster: 'eu-west-1',
        revision: R2,
        step: '2/3',
        reason: 'ProgressDeadlineExceeded: ImagePullBackOff',
      },
    ]);
    expect(released(p)['us-east-1']).toBe(R1);
    const again = plan({ status: p.status, observed }, at(120_000));
    expect(again.actions).toEqual([]);
    expect(again.status.phase).toBe('Stopped');
    expect(released(again)['us-east-1']).toBe(R1);
  });

  it('resumes from wave 0 when a newer revision arrives after a stop', () => {
    const stopped = plan({
      observed: [
        ro('staging', R2, { aborted: true, phase: 'Degraded', message: 'analysis failed' }),
        ro('eu-west-1', R1),
        ro('us-east-1', R1),
      ],
    });
    expect(stopped.status.stoppedBy?.cluster).toBe('staging');
    const p = plan(
      {
        status: stopped.status,
        observed: [
          ro('staging', R3, { phase: 'Progressing', stepIndex: 0 }),
          ro('eu-west-1', R1),
          ro('us-east-1', R1),
        ],
      },
      at(1000),
    );
    expect(p.status).toMatchObject({ phase: 'Progressing', revision: R3, currentWave: 0 });
    expect(p.status.stoppedBy).toBeUndefined();
    expect(released(p)).toEqual({ staging: R3, 'eu-west-1': R1, 'us-east-1': R1 });
  });

  it('does not take a lagging wave-0 cluster for a new revision', () => {
    const spec: FleetSpec = {
      ...SPEC,
      waves: [
        { name: 'canary', clusters: ['staging', 'us-east-1'] },
        { name: 'rest', rest: true },
      ],
    };
    const walking = plan({ spec, observed: [ro('staging', R2), ro('us-east-1', R1), ro('eu-west-1', R1)] });
    expect(walking.status.revision).toBe(R2);
    const p = plan(
      {
        spec,
        status: walking.status,
        observed: [ro('staging', R2), ro('us-east-1', R1), ro('eu-west-1', R1)],
      },
      at(1000),
    );
    expect(p.status.revision).toBe(R2);
    expect(p.status.message).toContain('us-east-1 Progressing');
  });

  it('reports an unreachable cluster as Unknown and does not stop on it', () => {
    const p = plan({
      observed: [
        ro('staging', R2),
        { cluster: 'eu-west-1', reachable: false, present: false, error: 'connect ECONNREFUSED' },
        ro('us-east-1', R1),
      ],
    });
    expect(p.status.phase).toBe('Progressing');
    expect(p.status.clusters.find((c) => c.name === 'eu-west-1')).toMatchObject({
      phase: 'Unknown',
      message: 'connect ECONNREFUSED',
    });
  });

  it.each([
    {
      name: 'an unknown cluster',
      spec: {
        ...SPEC,
        waves: [
          { name: 'canary', clusters: ['mars'] },
          { name: 'rest', rest: true },
        ],
      },
      want: {
        reason: 'UnknownCluster',
        message: 'spec.waves[0].clusters[0]: cluster "mars" is not registered',
      },
    },
    {
      name: 'an empty wave',
      spec: {
        ...SPEC,
        waves: [
          { name: 'canary', clusters: [] },
          { name: 'rest', rest: true },
        ],
      },
      want: {
        reason: 'InvalidSpec',
        message: 'spec.waves[0].clusters: is empty: a wave needs at least one cluster',
      },
    },
    {
      name: 'a wave with two selectors and rest not last',
      spec: {
        ...SPEC,
        waves: [
          { name: 'a', rest: true, percent: 5 },
          { name: 'b', clusters: ['staging'] },
        ],
      },
      want: {
        reason: 'InvalidSpec',
        message:
          'spec.waves[0]: must name exactly one of clusters, percent or rest: true; spec.waves[0].rest: only the last wave may take the rest',
      },
    },
  ])('marks the fleet Invalid for $name, naming the field', ({ spec, want }) => {
    const p = plan({ spec, observed: [ro('staging', R2)] });
    expect(p.status.phase).toBe('Invalid');
    expect(p.status.conditions.find((c) => c.type === 'Invalid')).toMatchObject({ status: 'True', ...want });
    expect(p.actions).toEqual([{ kind: 'emitEvent', type: 'Warning', ...want }]);
  });

  it('says so when no cluster has the Rollout', () => {
    const p = plan({ observed: CLUSTERS.map((cluster) => ({ cluster, reachable: true, present: false })) });
    expect(p.status.phase).toBe('Waiting');
    expect(p.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'RolloutNotFound',
      message: 'no cluster has a Rollout from apps/web/rollout.yaml',
    });
  });

  it('keeps lastTransitionTime while a condition does not change', () => {
    const observed = [ro('staging', R2, { phase: 'Progressing' }), ro('eu-west-1', R1), ro('us-east-1', R1)];
    const first = plan({ observed });
    const second = plan({ status: first.status, observed }, at(30_000));
    expect(second.status.conditions).toEqual(first.status.conditions);
  });
});
