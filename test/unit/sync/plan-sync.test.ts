// The sync planner: which phases and actions a commit's changes become, and the status what they did leads to.
import { describe, expect, it } from 'vitest';
import type { ManifestChange } from '../../../src/git/manifest-diff.ts';
import type { ManifestProblem } from '../../../src/git/manifest-parser.ts';
import { KubeInvalidError, KubeTransientError } from '../../../src/kube/errors.ts';
import { ObjectRefusedError } from '../../../src/sync/object-refused-error.ts';
import {
  actionSubject,
  planSync,
  prunableOf,
  REPEATED_SERVER_ERROR_ATTEMPTS,
  settleSync,
  upToDateWrite,
  fetchFailedWrite,
  type ActionOutcome,
  type ExecutedPhase,
  type SyncContext,
  type SyncPhase,
} from '../../../src/sync/plan-sync.ts';
import type { ServerErrorRecord, SourceStatus } from '../../../src/sync/source-status.ts';

const C1 = 'a'.repeat(40);
const C2 = 'b'.repeat(40);
const NOW = new Date('2026-01-01T00:00:05.000Z');
const ATTEMPT = '2026-01-01T00:00:00.000Z';

function manifest(kind: string, name: string | undefined, spec: Record<string, unknown> = {}, line = 1) {
  const apiVersion = kind === 'Rollout' ? 'argoproj.io/v1alpha1' : 'v1';
  return {
    key: `${kind}//${name ?? 'job-#digest'}`,
    apiVersion,
    kind,
    ...(name !== undefined ? { name } : { generateName: 'job-' }),
    object: { apiVersion, kind, metadata: name !== undefined ? { name } : { generateName: 'job-' }, spec },
    line,
  };
}
const added = (kind: string, name: string | undefined, spec?: Record<string, unknown>): ManifestChange => {
  const object = manifest(kind, name, spec);
  return { change: 'added', key: object.key, file: `${kind.toLowerCase()}.yaml`, line: 1, object };
};
const changed = (kind: string, name: string): ManifestChange => {
  const object = manifest(kind, name);
  return {
    change: 'changed',
    key: object.key,
    file: `${kind.toLowerCase()}.yaml`,
    line: 1,
    object,
    previous: object,
  };
};
const removed = (kind: string, name: string | undefined, line = 1): ManifestChange => {
  const previous = manifest(kind, name, {}, line);
  return { change: 'removed', key: previous.key, file: `${kind.toLowerCase()}.yaml`, previous };
};

function context(over: Partial<SyncContext> = {}): SyncContext {
  return {
    commit: C2,
    previous: C1,
    stored: { inventory: [] },
    diff: { basis: 'incremental', history: 'fast-forward', reread: new Set() },
    prune: true,
    defaultNamespace: 'default',
    ...over,
  };
}

/** Each phase as `name/part: verb key, …` in the order the phases start their actions. */
function describePhases(phases: SyncPhase[]): string[] {
  return phases.map(
    (p) =>
      `${p.name}/${p.part}: ${p.plan.order
        .map((i) => {
          const a = p.actions[i];
          if (!a) return '?';
          const extra =
            a.kind === 'applyObject'
              ? `${a.read === 'always' ? ' (read)' : ''}${a.enqueueReconcile ? ' +reconcile' : ''}`
              : '';
          return `${a.kind} ${actionSubject(a).key}${extra}`;
        })
        .join(', ')}`,
  );
}

describe('planSync: the phases and actions of a commit', () => {
  const rows: Array<{
    name: string;
    parts: ManifestChange[][];
    given?: Partial<SyncContext>;
    want: string[];
  }> = [
    {
      name: 'a Rollout and what it mounts go first; the rest after; prune last, in reverse order',
      parts: [
        [added('Rollout', 'web', { cm: 'web-config' }), added('ConfigMap', 'web-config')],
        [added('ConfigMap', 'other'), removed('ConfigMap', 'old', 2), removed('Rollout', 'gone', 1)],
      ],
      want: [
        'Sync/first: applyObject ConfigMap//web-config, applyObject Rollout//web +reconcile',
        'Sync/rest: applyObject ConfigMap//other',
        'Prune/all: pruneObject ConfigMap//old, pruneObject Rollout//gone',
      ],
    },
    {
      name: 'with prune off, what left Git is kept (and will be listed as pending)',
      parts: [[removed('ConfigMap', 'old')]],
      given: { prune: false },
      want: ['Sync/all: ', 'Prune/all: keepObject ConfigMap//old'],
    },
    {
      name: 'an object Git names only by generateName is created, and never pruned',
      parts: [[added('Job', undefined), removed('Job', undefined)]],
      want: ['Sync/all: createGenerated Job//job-#digest', 'Prune/all: '],
    },
    {
      name: 'after a Failed attempt every object is read before it is written',
      parts: [[changed('ConfigMap', 'a')]],
      given: { stored: { status: { phase: 'Failed', message: 'x', lastAttemptAt: ATTEMPT } } },
      want: ['Sync/all: applyObject ConfigMap//a (read)', 'Prune/all: '],
    },
    {
      name: 'a full diff reads every object before writing it',
      parts: [[changed('ConfigMap', 'a')]],
      given: { diff: { basis: 'full', history: 'rewritten', reread: 'all' } },
      want: ['Sync/all: applyObject ConfigMap//a (read)', 'Prune/all: '],
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      expect(describePhases(planSync(row.parts, context(row.given)))).toEqual(row.want);
    });
});

/** Runs a plan on paper: `outcome(key)` says what each action did. */
function execute(phases: SyncPhase[], outcome: (key: string) => ActionOutcome | undefined): ExecutedPhase[] {
  return phases.map((phase) => ({
    phase,
    actions: phase.actions.map((a) => (a ? actionSubject(a) : undefined)),
    outcomes: phase.actions.map((a) => (a ? outcome(actionSubject(a).key) : undefined)),
  }));
}

const serverError = (attempt: number): ServerErrorRecord => ({
  key: 'Service//web',
  commit: C2,
  code: 500,
  message: 'associative list',
  attempts: attempt,
});
const error500 = (): KubeTransientError =>
  new KubeTransientError('associative list', { verb: 'apply', kind: 'Service', name: 'web' }, 500, undefined);

describe('settleSync: the status and the retry from what the phases did', () => {
  const problem: ManifestProblem = { file: 'broken.yaml', line: 3, column: 1, message: 'invalid YAML' };
  const rows: Array<{
    name: string;
    parts: ManifestChange[][];
    given?: Partial<SyncContext>;
    diffProblems?: ManifestProblem[];
    outcomes: Record<string, ActionOutcome>;
    wantStatus: Partial<SourceStatus> & { write: string };
    wantInventory?: string[];
    wantRetry?: boolean;
  }> = [
    {
      name: 'everything applied and pruned: Synced at the commit, the inventory follows',
      parts: [[added('ConfigMap', 'a'), removed('ConfigMap', 'old')]],
      given: { stored: { inventory: ['v1/ConfigMap/default/old'] } },
      outcomes: {
        'ConfigMap//a': { done: 'applied', result: 'created', inventoryKey: 'v1/ConfigMap/default/a' },
        'ConfigMap//old': { done: 'removed', result: 'deleted', inventoryKey: 'v1/ConfigMap/default/old' },
      },
      wantStatus: {
        write: 'synced',
        phase: 'Synced',
        message: `synced ${C2.slice(0, 12)}: 1 applied, 1 pruned`,
      },
      wantInventory: ['v1/ConfigMap/default/a'],
    },
    {
      name: 'a refused object and a broken file: Degraded, nothing retried',
      parts: [[added('ConfigMap', 'a')]],
      diffProblems: [problem],
      outcomes: {
        'ConfigMap//a': { failed: new ObjectRefusedError('sync.out_of_scope', 'metadata.namespace', 'no') },
      },
      wantStatus: {
        write: 'synced',
        phase: 'Degraded',
        message: '2 object(s) skipped; 0 applied',
        problems: [
          { file: 'broken.yaml', line: 3, message: 'invalid YAML' },
          { file: 'configmap.yaml', line: 1, message: 'metadata.namespace: no' },
        ],
      },
    },
    {
      name: 'an object the API server refuses for good (422) is a problem, not a retry',
      parts: [[added('ConfigMap', 'a')]],
      outcomes: {
        'ConfigMap//a': {
          failed: new KubeInvalidError('bad', { verb: 'apply', kind: 'ConfigMap' }, 422, 'Invalid'),
        },
      },
      wantStatus: { write: 'synced', phase: 'Degraded' },
    },
    {
      name: 'a transient failure holds the commit: Failed, retried, the inventory keeps what was written',
      parts: [[added('ConfigMap', 'a'), added('Service', 'web')]],
      outcomes: {
        'ConfigMap//a': { done: 'applied', result: 'created', inventoryKey: 'v1/ConfigMap/default/a' },
        'Service//web': { failed: error500() },
      },
      wantStatus: { write: 'failed' },
      wantInventory: ['v1/ConfigMap/default/a'],
      wantRetry: true,
    },
    {
      name: `the same 5xx on ${REPEATED_SERVER_ERROR_ATTEMPTS} attempts at the commit is the object's problem`,
      parts: [[added('Service', 'web')]],
      given: {
        stored: {
          inventory: [],
          status: {
            phase: 'Failed',
            message: 'x',
            lastAttemptAt: ATTEMPT,
            serverErrors: [serverError(REPEATED_SERVER_ERROR_ATTEMPTS - 1)],
          },
        },
      },
      outcomes: { 'Service//web': { failed: error500() } },
      wantStatus: { write: 'synced', phase: 'Degraded' },
    },
    {
      name: 'prune off: what left Git is pending, the status Synced',
      parts: [[removed('ConfigMap', 'old')]],
      given: { prune: false },
      outcomes: { 'ConfigMap//old': { done: 'kept' } },
      wantStatus: {
        write: 'synced',
        phase: 'Synced',
        pending: [{ key: 'ConfigMap//old', reason: 'prune disabled' }],
      },
    },
    {
      name: 'a problem standing in a file the diff did not read again stays',
      parts: [[added('ConfigMap', 'a')]],
      given: {
        stored: {
          inventory: [],
          status: {
            phase: 'Degraded',
            message: 'x',
            commit: C1,
            lastAttemptAt: ATTEMPT,
            problems: [{ file: 'broken.yaml', line: 3, message: 'invalid YAML' }],
          },
        },
      },
      outcomes: {
        'ConfigMap//a': { done: 'applied', result: 'unchanged', inventoryKey: 'v1/ConfigMap/default/a' },
      },
      wantStatus: {
        write: 'synced',
        phase: 'Degraded',
        problems: [{ file: 'broken.yaml', line: 3, message: 'invalid YAML' }],
      },
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      const ctx = context(row.given);
      const executed = execute(planSync(row.parts, ctx), (key) => row.outcomes[key]);
      const settled = settleSync(
        ctx,
        { diffProblems: row.diffProblems ?? [], executed, attemptAt: ATTEMPT },
        NOW,
      );
      const { write, ...status } = row.wantStatus;
      expect(settled.status.write).toBe(write);
      if (settled.status.write === 'synced') {
        expect(settled.status.status).toMatchObject({
          ...status,
          commit: C2,
          lastSyncedAt: NOW.toISOString(),
        });
        if (row.wantInventory) expect([...settled.status.inventory].sort()).toEqual(row.wantInventory);
      }
      if (settled.status.write === 'failed') {
        expect(settled.status.failure.message).toMatch(
          new RegExp(`^sync of ${C2.slice(0, 12)} will be retried: `),
        );
        if (row.wantInventory)
          expect([...(settled.status.inventory ?? [])].sort()).toEqual(row.wantInventory);
      }
      expect(settled.retry !== undefined).toBe(row.wantRetry ?? false);
    });

  it('counts a repeated 5xx across attempts while it is retried', () => {
    const ctx = context({
      stored: {
        status: { phase: 'Failed', message: 'x', lastAttemptAt: ATTEMPT, serverErrors: [serverError(1)] },
      },
    });
    const executed = execute(planSync([[added('Service', 'web')]], ctx), () => ({ failed: error500() }));
    const settled = settleSync(ctx, { diffProblems: [], executed, attemptAt: ATTEMPT }, NOW);
    expect(settled.status).toMatchObject({ write: 'failed', failure: { serverErrors: [serverError(2)] } });
  });
});

describe('the status writes around a sync', () => {
  it('the synced commit again: back from Failed, else nothing written', () => {
    const failed: SourceStatus = { phase: 'Failed', message: 'x', commit: C1, lastAttemptAt: ATTEMPT };
    expect(upToDateWrite(failed, { head: C1, attemptAt: ATTEMPT }).write).toBe('recovered');
    expect(upToDateWrite({ ...failed, phase: 'Synced' }, { head: C1, attemptAt: ATTEMPT }).write).toBe(
      'none',
    );
  });
  it('Git unreachable: Failed with the fetch error', () => {
    expect(fetchFailedWrite(new Error('ECONNREFUSED'), ATTEMPT)).toEqual({
      write: 'failed',
      failure: { message: 'fetch failed: ECONNREFUSED', attemptAt: ATTEMPT },
    });
  });
});

describe('prunableOf', () => {
  it("prunes only the source's own objects, and none this sync applied (a moved manifest)", () => {
    const prunable = prunableOf(
      new Set(['v1/ConfigMap/default/a', 'v1/ConfigMap/default/b']),
      new Set(['v1/ConfigMap/default/b']),
    );
    expect(
      ['v1/ConfigMap/default/a', 'v1/ConfigMap/default/b', 'v1/ConfigMap/default/c'].map((k) =>
        prunable.has(k),
      ),
    ).toEqual([true, false, false]);
  });
});
