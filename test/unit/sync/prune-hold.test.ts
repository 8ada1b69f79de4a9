// The prune hold: a ConfigMap or Secret that left Git stays while a ReplicaSet with pods uses it, and goes once none does.
import { describe, expect, it } from 'vitest';
import type { ManifestChange } from '../../../src/git/manifest-diff.ts';
import {
  actionSubject,
  planSync,
  pruneHoldNamespaces,
  settleSync,
  type ActionOutcome,
  type ExecutedPhase,
  type SyncContext,
  type SyncPhase,
} from '../../../src/sync/plan-sync.ts';
import { podTemplateReferences } from '../../../src/sync/pod-template-references.ts';
import {
  decideHeldPrunes,
  replicaSetUseOf,
  statusAfterHeldPrunes,
  type ObservedUses,
  type ReplicaSetUse,
} from '../../../src/sync/prune-hold.ts';
import type { HeldPrune, SourceStatus } from '../../../src/sync/source-status.ts';

const C1 = 'a'.repeat(40);
const C2 = 'b'.repeat(40);
const NOW = new Date('2026-01-01T00:10:00.000Z');
const EARLIER = '2026-01-01T00:00:00.000Z';

/** A ReplicaSet as the API server lists it. */
function replicaSet(
  name: string,
  podSpec: Record<string, unknown>,
  counts: { replicas?: number; pods?: number; namespace?: string } = {},
): Record<string, unknown> {
  return {
    metadata: { name, namespace: counts.namespace ?? 'default' },
    spec: {
      ...(counts.replicas !== undefined ? { replicas: counts.replicas } : {}),
      template: { spec: podSpec },
    },
    status: { replicas: counts.pods ?? counts.replicas ?? 1 },
  };
}

const envFrom = (configMap: string) => ({
  containers: [{ name: 'app', image: 'web:1', envFrom: [{ configMapRef: { name: configMap } }] }],
});
const projectedSecret = (secret: string) => ({
  containers: [{ name: 'app', image: 'web:1' }],
  volumes: [
    {
      name: 'creds',
      projected: { sources: [{ serviceAccountToken: { path: 't' } }, { secret: { name: secret } }] },
    },
  ],
});

const usesOf = (...sets: Array<Record<string, unknown>>): ObservedUses => ({
  replicaSets: sets.flatMap((rs) => replicaSetUseOf(rs) ?? []),
});

describe('podTemplateReferences: what a pod of the template needs to start', () => {
  it('finds every way a pod names a ConfigMap or Secret, once each', () => {
    const refs = podTemplateReferences({
      spec: {
        volumes: [
          { name: 'a', configMap: { name: 'cm-volume' } },
          { name: 'b', secret: { secretName: 'secret-volume' } },
          {
            name: 'c',
            projected: {
              sources: [{ configMap: { name: 'cm-projected' } }, { secret: { name: 's-projected' } }],
            },
          },
          { name: 'd', csi: { driver: 'x', nodePublishSecretRef: { name: 's-csi' } } },
          { name: 'e', rbd: { image: 'i', secretRef: { name: 's-rbd' } } },
          { name: 'f', emptyDir: {} },
        ],
        initContainers: [
          { name: 'init', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's-init', key: 'k' } } }] },
        ],
        containers: [
          {
            name: 'app',
            env: [
              { name: 'A', value: 'cm-volume' },
              { name: 'B', valueFrom: { configMapKeyRef: { name: 'cm-env', key: 'k', optional: true } } },
            ],
            envFrom: [{ configMapRef: { name: 'cm-envfrom' } }, { secretRef: { name: 's-envfrom' } }],
          },
        ],
        ephemeralContainers: [{ name: 'debug', envFrom: [{ configMapRef: { name: 'cm-volume' } }] }],
        imagePullSecrets: [{ name: 'registry' }],
      },
    });
    expect(refs).toEqual({
      configMaps: ['cm-env', 'cm-envfrom', 'cm-projected', 'cm-volume'],
      secrets: ['registry', 's-csi', 's-envfrom', 's-init', 's-projected', 's-rbd', 'secret-volume'],
    });
  });

  it('names nothing for what is not a pod template', () => {
    expect(podTemplateReferences(undefined)).toEqual({ configMaps: [], secrets: [] });
    expect(podTemplateReferences({ spec: { volumes: 'nope', containers: [null, 3] } })).toEqual({
      configMaps: [],
      secrets: [],
    });
  });
});

describe('replicaSetUseOf: which ReplicaSets can hold a prune', () => {
  const rows: Array<{ name: string; rs: Record<string, unknown>; want: Partial<ReplicaSetUse> | undefined }> =
    [
      {
        name: 'one with pods',
        rs: replicaSet('web-1', envFrom('web-config-v1'), { replicas: 2 }),
        want: { name: 'web-1', replicas: 2, pods: 2, configMaps: ['web-config-v1'] },
      },
      {
        name: 'one scaled to 0 whose pods are still terminating',
        rs: replicaSet('web-1', envFrom('web-config-v1'), { replicas: 0, pods: 1 }),
        want: { replicas: 0, pods: 1 },
      },
      {
        name: 'one scaled to 0 that has no pods left: none',
        rs: replicaSet('web-1', envFrom('web-config-v1'), { replicas: 0, pods: 0 }),
        want: undefined,
      },
      {
        name: 'no spec.replicas is 1, as the API server defaults it',
        rs: replicaSet('web-1', envFrom('web-config-v1'), { pods: 0 }),
        want: { replicas: 1, pods: 0 },
      },
      {
        name: 'a template naming no ConfigMap or Secret: none',
        rs: replicaSet('web-1', { containers: [{ name: 'app' }] }, { replicas: 2 }),
        want: undefined,
      },
    ];
  for (const row of rows)
    it(row.name, () => {
      const use = replicaSetUseOf(row.rs);
      if (row.want === undefined) expect(use).toBeUndefined();
      else expect(use).toMatchObject(row.want);
    });
});

/** A ConfigMap or Secret of Git (namespace left to the source's default, as most manifests do). */
function manifest(kind: string, name: string, line = 1) {
  const apiVersion = kind === 'Rollout' ? 'argoproj.io/v1alpha1' : 'v1';
  return {
    key: `${kind}//${name}`,
    apiVersion,
    kind,
    name,
    object: { apiVersion, kind, metadata: { name } },
    line,
  };
}
const removed = (kind: string, name: string): ManifestChange => {
  const previous = manifest(kind, name);
  return { change: 'removed', key: previous.key, file: `${name}.yaml`, previous };
};
const added = (kind: string, name: string): ManifestChange => {
  const object = manifest(kind, name);
  return { change: 'added', key: object.key, file: `${name}.yaml`, line: 1, object };
};

const held = (kind: 'ConfigMap' | 'Secret', name: string, usedBy: string[] = ['web-1']): HeldPrune => ({
  key: `/${kind}/default/${name}`,
  kind,
  namespace: 'default',
  name,
  file: `${name}.yaml`,
  line: 1,
  usedBy,
  reason: `in use by ${usedBy.map((rs) => `ReplicaSet default/${rs} (2 replicas)`).join(', ')}`,
  since: EARLIER,
});

function context(
  over: { inventory?: string[]; pendingPrune?: HeldPrune[]; prune?: boolean } = {},
): SyncContext {
  return {
    commit: C2,
    previous: C1,
    stored: {
      inventory: over.inventory ?? [],
      ...(over.pendingPrune
        ? {
            status: {
              phase: 'Synced',
              message: 'x',
              commit: C1,
              lastAttemptAt: EARLIER,
              pendingPrune: over.pendingPrune,
            },
          }
        : {}),
    },
    diff: { basis: 'incremental', history: 'fast-forward', reread: new Set() },
    prune: over.prune ?? true,
    defaultNamespace: 'default',
  };
}

/** The Prune phase as `verb key [held by …]`, in the order it starts them. */
function prunePhase(phases: SyncPhase[]): string[] {
  const prune = phases.find((p) => p.name === 'Prune') as SyncPhase;
  return prune.plan.order.map((i) => {
    const a = prune.actions[i];
    if (!a) return '?';
    return a.kind === 'holdPrune'
      ? `holdPrune ${a.key} by ${a.held.usedBy.join(',') || '?'}`
      : `${a.kind} ${actionSubject(a).key}`;
  });
}

describe('planSync: the Prune phase holds what a ReplicaSet with pods still uses', () => {
  const inventory = [
    '/ConfigMap/default/web-config-v1',
    '/Secret/default/db-creds',
    '/ConfigMap/default/other',
  ];
  const rows: Array<{
    name: string;
    parts: ManifestChange[][];
    given?: Parameters<typeof context>[0];
    uses: ObservedUses;
    want: string[];
  }> = [
    {
      name: 'the old config of a canary, envFrom of the stable ReplicaSet: held',
      parts: [[added('ConfigMap', 'web-config-v2'), removed('ConfigMap', 'web-config-v1')]],
      uses: usesOf(
        replicaSet('web-1', envFrom('web-config-v1'), { replicas: 2 }),
        replicaSet('web-2', envFrom('web-config-v2'), { replicas: 1 }),
      ),
      want: ['holdPrune ConfigMap//web-config-v1 by web-1'],
    },
    {
      name: 'a Secret in a projected volume: held',
      parts: [[removed('Secret', 'db-creds')]],
      uses: usesOf(replicaSet('web-1', projectedSecret('db-creds'), { replicas: 3 })),
      want: ['holdPrune Secret//db-creds by web-1'],
    },
    {
      name: 'a ReplicaSet at 0 with pods still terminating holds it',
      parts: [[removed('ConfigMap', 'web-config-v1')]],
      uses: usesOf(replicaSet('web-1', envFrom('web-config-v1'), { replicas: 0, pods: 1 })),
      want: ['holdPrune ConfigMap//web-config-v1 by web-1'],
    },
    {
      name: 'every ReplicaSet using it scaled to 0 and gone of pods: pruned',
      parts: [[removed('ConfigMap', 'web-config-v1')]],
      uses: usesOf(replicaSet('web-1', envFrom('web-config-v1'), { replicas: 0, pods: 0 })),
      want: ['pruneObject ConfigMap//web-config-v1'],
    },
    {
      name: 'a ReplicaSet in another namespace, or using a Secret of the same name, does not hold a ConfigMap',
      parts: [[removed('ConfigMap', 'web-config-v1')]],
      uses: usesOf(
        replicaSet('web-1', envFrom('web-config-v1'), { replicas: 2, namespace: 'staging' }),
        replicaSet('web-2', projectedSecret('web-config-v1'), { replicas: 2 }),
      ),
      want: ['pruneObject ConfigMap//web-config-v1'],
    },
    {
      name: 'not in the inventory: not the source’s to hold (the prune refuses it as before)',
      parts: [[removed('ConfigMap', 'stranger')]],
      uses: usesOf(replicaSet('web-1', envFrom('stranger'), { replicas: 2 })),
      want: ['pruneObject ConfigMap//stranger'],
    },
    {
      name: 'the ReplicaSets could not be read: held (deleting cannot be undone)',
      parts: [[removed('ConfigMap', 'web-config-v1')]],
      uses: { failed: 'HTTP 503' },
      want: ['holdPrune ConfigMap//web-config-v1 by ?'],
    },
    {
      name: 'held earlier and still in use: held again; held earlier and free now: pruned',
      parts: [[added('ConfigMap', 'unrelated')]],
      given: { pendingPrune: [held('ConfigMap', 'web-config-v1'), held('Secret', 'db-creds')] },
      uses: usesOf(
        replicaSet('web-1', envFrom('web-config-v1'), { replicas: 0, pods: 0 }),
        replicaSet('web-1', projectedSecret('db-creds'), { replicas: 1 }),
      ),
      want: ['pruneObject ConfigMap/default/web-config-v1', 'holdPrune Secret/default/db-creds by web-1'],
    },
    {
      name: 'held earlier and back in Git: dropped (the commit applies it)',
      parts: [[added('ConfigMap', 'web-config-v1')]],
      given: { pendingPrune: [held('ConfigMap', 'web-config-v1')] },
      uses: usesOf(replicaSet('web-1', envFrom('web-config-v1'), { replicas: 2 })),
      want: [],
    },
    {
      name: 'held earlier, then prune turned off: kept (and listed as pending)',
      parts: [[]],
      given: { pendingPrune: [held('ConfigMap', 'web-config-v1')], prune: false },
      uses: usesOf(),
      want: ['keepObject ConfigMap/default/web-config-v1'],
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      const ctx = context({ inventory, ...row.given });
      expect(prunePhase(planSync(row.parts, ctx, { uses: row.uses, now: NOW }))).toEqual(row.want);
    });
});

describe('pruneHoldNamespaces: a sync reads ReplicaSets only when a hold may be decided', () => {
  it('reads none for a sync that prunes no ConfigMap or Secret of its own', () => {
    const ctx = context({ inventory: ['/ConfigMap/default/web-config-v1', 'apps/Deployment/default/web'] });
    const removals = (changes: ManifestChange[]) =>
      changes.filter((c): c is Extract<ManifestChange, { change: 'removed' }> => c.change === 'removed');
    expect(pruneHoldNamespaces(removals([removed('Service', 'web')]), ctx)).toEqual([]);
    expect(pruneHoldNamespaces(removals([removed('ConfigMap', 'stranger')]), ctx)).toEqual([]);
    expect(pruneHoldNamespaces(removals([removed('ConfigMap', 'web-config-v1')]), ctx)).toEqual(['default']);
    expect(
      pruneHoldNamespaces(
        removals([removed('ConfigMap', 'web-config-v1')]),
        context({ inventory: ['/ConfigMap/default/web-config-v1'], prune: false }),
      ),
    ).toEqual([]);
    expect(pruneHoldNamespaces([], context({ pendingPrune: [held('Secret', 'db-creds')] }))).toEqual([
      'default',
    ]);
  });
});

/** Runs a plan on paper: a hold is held, a prune deletes. */
function execute(phases: SyncPhase[]): ExecutedPhase[] {
  const outcomeOf = (a: NonNullable<SyncPhase['actions'][number]>): ActionOutcome => {
    if (a.kind === 'holdPrune') return { done: 'held', held: a.held };
    if (a.kind === 'pruneObject')
      return { done: 'removed', result: 'deleted', inventoryKey: `/${a.ref.kind}/default/${a.ref.name}` };
    if (a.kind === 'keepObject') return { done: 'kept' };
    return {
      done: 'applied',
      result: 'created',
      inventoryKey: `/${a.desired.kind}/default/${a.desired.name}`,
    };
  };
  return phases.map((phase) => ({
    phase,
    actions: phase.actions.map((a) => (a ? actionSubject(a) : undefined)),
    outcomes: phase.actions.map((a) => (a ? outcomeOf(a) : undefined)),
  }));
}

describe('settleSync: a held prune stays in the inventory and is listed in pendingPrune', () => {
  it('records which ReplicaSet holds it and since when', () => {
    const ctx = context({ inventory: ['/ConfigMap/default/web-config-v1'] });
    const phases = planSync(
      [[added('ConfigMap', 'web-config-v2'), removed('ConfigMap', 'web-config-v1')]],
      ctx,
      {
        uses: usesOf(replicaSet('web-1', envFrom('web-config-v1'), { replicas: 2 })),
        now: NOW,
      },
    );
    const settled = settleSync(ctx, { diffProblems: [], executed: execute(phases), attemptAt: EARLIER }, NOW);
    expect(settled.removed).toEqual([{ key: 'ConfigMap//web-config-v1', result: 'held (in use)' }]);
    if (settled.status.write !== 'synced') throw new Error('expected a synced write');
    expect([...settled.status.inventory].sort()).toEqual([
      '/ConfigMap/default/web-config-v1',
      '/ConfigMap/default/web-config-v2',
    ]);
    expect(settled.status.status).toMatchObject({
      phase: 'Synced',
      pendingPrune: [
        {
          key: '/ConfigMap/default/web-config-v1',
          kind: 'ConfigMap',
          namespace: 'default',
          name: 'web-config-v1',
          file: 'web-config-v1.yaml',
          usedBy: ['web-1'],
          reason: 'in use by ReplicaSet default/web-1 (2 replicas)',
          since: NOW.toISOString(),
        },
      ],
    });
  });

  it('a later sync that prunes it leaves no pendingPrune and takes it out of the inventory', () => {
    const ctx = context({
      inventory: ['/ConfigMap/default/web-config-v1'],
      pendingPrune: [held('ConfigMap', 'web-config-v1')],
    });
    const phases = planSync([[]], ctx, { uses: usesOf(), now: NOW });
    const settled = settleSync(ctx, { diffProblems: [], executed: execute(phases), attemptAt: EARLIER }, NOW);
    if (settled.status.write !== 'synced') throw new Error('expected a synced write');
    expect(settled.status.status.pendingPrune).toBeUndefined();
    expect(settled.status.inventory).toEqual([]);
  });
});

describe('decideHeldPrunes and statusAfterHeldPrunes: a poll with no new commit', () => {
  const inventory = new Set(['/ConfigMap/default/web-config-v1', '/Secret/default/db-creds']);

  it('prunes what nothing uses, holds the rest with the ReplicaSets seen now, drops what is not the source’s', () => {
    const decision = decideHeldPrunes(
      [held('ConfigMap', 'web-config-v1'), held('Secret', 'db-creds', ['web-0']), held('ConfigMap', 'gone')],
      {
        inventory,
        observed: usesOf(
          replicaSet('web-1', envFrom('web-config-v1'), { replicas: 0, pods: 0 }),
          replicaSet('web-2', projectedSecret('db-creds'), { replicas: 1 }),
        ),
      },
    );
    expect(decision.prune.map((h) => h.name)).toEqual(['web-config-v1']);
    expect(decision.held).toEqual([
      {
        ...held('Secret', 'db-creds', ['web-2']),
        reason: 'in use by ReplicaSet default/web-2 (1 replica)',
      },
    ]);
    expect(decision.dropped.map((h) => h.name)).toEqual(['gone']);
  });

  it('merges into the status as stored now, keeping entries a sync elsewhere added meanwhile', () => {
    const stored: SourceStatus = {
      phase: 'Synced',
      message: 'x',
      lastAttemptAt: EARLIER,
      pendingPrune: [
        held('ConfigMap', 'web-config-v1'),
        held('Secret', 'db-creds'),
        held('ConfigMap', 'newer'),
      ],
    };
    const next = statusAfterHeldPrunes(stored, {
      settled: new Set(['/ConfigMap/default/web-config-v1']),
      held: [held('Secret', 'db-creds', ['web-2'])],
    });
    expect(next?.pendingPrune?.map((h) => `${h.name}:${h.usedBy.join(',')}`)).toEqual([
      'db-creds:web-2',
      'newer:web-1',
    ]);
    const last = statusAfterHeldPrunes(
      { ...stored, pendingPrune: [held('ConfigMap', 'web-config-v1')] },
      { settled: new Set(['/ConfigMap/default/web-config-v1']), held: [] },
    );
    expect(last).toEqual({ phase: 'Synced', message: 'x', lastAttemptAt: EARLIER });
    // Nothing changed: nothing to write.
    expect(statusAfterHeldPrunes(stored, { settled: new Set(), held: [] })).toBeUndefined();
  });
});
