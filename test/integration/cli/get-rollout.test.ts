// `rollgate get rollout` (text, json, --watch --until-complete), `status` and `list rollouts` through main() against the sandbox,
// with the real reconciler moving the rollouts.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse, stringify } from 'yaml';
import { CustomObjectClient } from '../../../src/kube/custom-object-client.ts';
import { readSimpleKubeconfig } from '../../../src/kube/simple-kubeconfig.ts';
import type { RolloutListRow, RolloutTree } from '../../../src/views/rollout-tree.ts';
import { abortRollout } from '../../../src/views/rollout-commands.ts';
import { runCli as run } from '../../support/run-cli.ts';
import { ReconcileHarness, isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';

const template = (name: string, image: string) => ({
  metadata: { labels: { app: name } },
  spec: { containers: [{ name: 'app', image }] },
});

/**
 * The same kubeconfig with a field the plain reader does not know (a context's extensions): the CLI
 * reads through client-node with it.
 */
async function clientNodeKubeconfig(kubeconfig: string): Promise<string> {
  const config = parse(readFileSync(kubeconfig, 'utf8')) as { contexts: Array<{ context: object }> };
  for (const entry of config.contexts) entry.context = { ...entry.context, extensions: [] };
  const throughClientNode = join(dirname(kubeconfig), 'kubeconfig-client-node');
  writeFileSync(throughClientNode, stringify(config));
  expect(readSimpleKubeconfig({ kubeconfig })).toBeDefined();
  expect(readSimpleKubeconfig({ kubeconfig: throughClientNode })).toBeUndefined();
  return throughClientNode;
}

describe('get rollout / list rollouts', () => {
  let harness: ReconcileHarness;
  let kubeconfig: string;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
    ({ kubeconfig } = await harness.writeKubeconfig());
  });
  afterAll(async () => {
    await harness.stop();
  });

  it('shows a paused canary as a header and a revision tree, in text and in json', async () => {
    const key = await harness.createRollout(
      testRollout({
        name: 'tree',
        replicas: 3,
        steps: [{ setWeight: 34 }, { pause: {} }, { setWeight: 67 }],
      }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    await harness.patchSpec(key, { template: template('tree', 'app:2.0') });
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });

    const text = await run('get', 'rollout', 'tree', '--kubeconfig', kubeconfig);
    expect(text.code).toBe(0);
    // Piped: no colours, no screen clearing.
    expect(text.stdout).not.toContain('\u001b[');
    expect(text.stdout).toMatch(/^Name: +tree\nNamespace: +default\nStatus: +॥ Paused\n/);
    expect(text.stdout).toMatch(/ {2}Step: +1\/3\n {2}SetWeight: +34\n {2}ActualWeight: +34\n/);
    expect(text.stdout).toMatch(/Images: +app:1\.0 \(stable\)\n +app:2\.0 \(canary\)\n/);
    expect(text.stdout).toMatch(/ {2}Desired: +3\n/);
    expect(text.stdout).toMatch(/├──# revision:2\n│ {2}└──⧉ tree-\w+ +ReplicaSet +✔ Healthy +\S+ +canary\n/);
    expect(text.stdout).toMatch(/└──# revision:1\n {3}└──⧉ tree-\w+ +ReplicaSet +✔ Healthy +\S+ +stable\n/);
    expect(text.stdout.match(/□ tree-\w+-\w+ +Pod +✔ Running +\S+ +ready:1\/1/g)).toHaveLength(4);

    const json = await run('get', 'rollout', 'tree', '-o', 'view-json', '--kubeconfig', kubeconfig);
    const tree = JSON.parse(json.stdout) as RolloutTree;
    expect(tree).toMatchObject({
      name: 'tree',
      status: 'Paused',
      strategy: 'Canary',
      step: { index: 1, count: 3 },
      setWeight: 34,
      actualWeight: 34,
      replicas: { desired: 3 },
    });
    expect(
      tree.revisions.map((r) => [r.revision, r.replicaSets.map((rs) => [rs.role, rs.pods.length])]),
    ).toEqual([
      [2, [['canary', 2]]],
      [1, [['stable', 2]]],
    ]);

    const missing = await run('get', 'rollout', 'nope', '--kubeconfig', kubeconfig);
    expect(missing).toMatchObject({ code: 1, stderr: 'rollgate: rollout default/nope not found\n' });
  });

  it('list rollouts prints one row per rollout, -A adds the namespace', async () => {
    await harness.createRollout(testRollout({ name: 'listed', replicas: 2, steps: [{ setWeight: 50 }] }));
    await harness.runUntil({ namespace: 'default', name: 'listed' }, isFullyPromoted, { timeoutMs: 30_000 });
    const listed = await run('list', 'rollouts', '--kubeconfig', kubeconfig);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^NAME +STRATEGY +STATUS +STEP +SET-WEIGHT +READY +DESIRED +UP-TO-DATE +AVAILABLE$/,
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^listed +Canary +✔ Healthy +1\/1 +100 +2\/2 +2 +2 +2$/),
    );
    const all = await run('list', 'rollouts', '-A', '--kubeconfig', kubeconfig);
    expect(all.stdout.split('\n')[0]).toMatch(/^NAMESPACE +NAME +STRATEGY/);
    expect(all.stdout).toMatch(/\ndefault +listed +Canary/);
    const json = JSON.parse(
      (await run('list', 'rollouts', '-o', 'view-json', '--kubeconfig', kubeconfig)).stdout,
    ) as RolloutListRow[];
    expect(json.find((row) => row.name === 'listed')).toMatchObject({
      status: 'Healthy',
      ready: 2,
      desired: 2,
    });
    const both = await run('list', 'rollouts', '-A', '-n', 'default', '--kubeconfig', kubeconfig);
    expect(both.code).toBe(2);
  });

  it('list rollouts prints the same bytes read without client-node as through it', async () => {
    await harness.createRollout(testRollout({ name: 'same', replicas: 1, steps: [{ setWeight: 50 }] }));
    await harness.runUntil({ namespace: 'default', name: 'same' }, isFullyPromoted, { timeoutMs: 30_000 });
    const throughClientNode = await clientNodeKubeconfig(kubeconfig);
    // Not -o wide: its AGE column could tick between the two runs.
    for (const args of [
      [],
      ['-A'],
      ['-o', 'view-json'],
      ['-o', 'json'],
      ['-A', '-o', 'yaml'],
      ['-o', 'name'],
    ]) {
      const plain = await run('list', 'rollouts', ...args, '--kubeconfig', kubeconfig);
      expect(plain.stdout, args.join(' ')).toContain('same');
      expect(plain, args.join(' ')).toEqual(
        await run('list', 'rollouts', ...args, '--kubeconfig', throughClientNode),
      );
    }
  });

  /**
   * Runs each command with the simple kubeconfig and with one only client-node reads, and expects the same
   * exit code, stdout and stderr; the plain run must have read through the plain client (a found rollout's
   * ReplicaSets and pods), the client-node run must not have.
   */
  async function expectSameBytes(commands: string[][]): Promise<void> {
    const throughClientNode = await clientNodeKubeconfig(kubeconfig);
    // Ages and pause clocks are read from one instant in both runs.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date() });
    const plainReads = vi.spyOn(CustomObjectClient.prototype, 'readPath');
    try {
      for (const args of commands) {
        plainReads.mockClear();
        const plain = await run(...args, '--kubeconfig', kubeconfig);
        // The ReplicaSets and pods of a found rollout come through the plain client.
        if (!args.includes('nope') && !args.includes('yaml'))
          expect(plainReads, args.join(' ')).toHaveBeenCalled();
        expect(plain.stdout + plain.stderr, args.join(' ')).toContain(args[args[0] === 'get' ? 2 : 1]);
        plainReads.mockClear();
        expect(plain, args.join(' ')).toEqual(await run(...args, '--kubeconfig', throughClientNode));
        expect(plainReads, args.join(' ')).not.toHaveBeenCalled();
      }
    } finally {
      plainReads.mockRestore();
      vi.useRealTimers();
    }
  }

  it('get rollout and status print the same bytes read without client-node as through it', async () => {
    const key = await harness.createRollout(
      testRollout({ name: 'alike', replicas: 2, steps: [{ setWeight: 50 }, { pause: {} }] }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    await harness.patchSpec(key, { template: template('alike', 'app:2.0') });
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });
    await expectSameBytes([
      ['get', 'rollout', 'alike'],
      ['get', 'rollout', 'alike', '-o', 'wide'],
      ['get', 'rollout', 'alike', '-o', 'view-json'],
      ['get', 'rollout', 'alike', '-o', 'yaml'],
      ['get', 'rollout', 'nope'],
      ['status', 'alike'],
      ['status', 'alike', '-o', 'json'],
      ['status', 'nope'],
    ]);
  }, 90_000);

  it('a blue-green rollout (its Services) and a workloadRef rollout (its Deployment) print the same bytes without client-node', async () => {
    await harness.createService('bluegreen-active', { app: 'bluegreen' });
    await harness.createService('bluegreen-preview', { app: 'bluegreen' });
    const blueGreen = testRollout({ name: 'bluegreen', replicas: 2 });
    (blueGreen.spec as { strategy: unknown }).strategy = {
      blueGreen: {
        activeService: 'bluegreen-active',
        previewService: 'bluegreen-preview',
        autoPromotionEnabled: false,
      },
    };
    const blueGreenKey = await harness.createRollout(blueGreen);
    await harness.runUntil(blueGreenKey, isFullyPromoted, { timeoutMs: 30_000 });
    await harness.patchSpec(blueGreenKey, { template: template('bluegreen', 'app:2.0') });
    // Paused before the switch: the preview Service selects the new revision, the active one the old.
    await harness.runUntil(blueGreenKey, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });

    await harness.clients.apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'referenced' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'referenced' } },
          template: template('referenced', 'app:1.0'),
        },
      },
    });
    // No selector of its own: its ReplicaSets and pods are listed by the Deployment's, so a Deployment read
    // that differs from client-node's shows in the tree.
    const referencing = testRollout({ name: 'referenced', replicas: 2, steps: [{ setWeight: 50 }] });
    const { template: _template, selector: _selector, ...spec } = referencing.spec as Record<string, unknown>;
    const referencedKey = await harness.createRollout({
      ...referencing,
      spec: { ...spec, workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'referenced' } },
    });
    await harness.runUntil(referencedKey, isFullyPromoted, { timeoutMs: 30_000 });

    const status = await run('status', 'bluegreen', '--kubeconfig', kubeconfig);
    // What the Services are read for: each one's revision, shown by status.
    expect(status.stdout).toMatch(/bluegreen-active/);
    expect(status.stdout).toMatch(/bluegreen-preview/);
    await expectSameBytes([
      ['get', 'rollout', 'bluegreen'],
      ['get', 'rollout', 'bluegreen', '-o', 'view-json'],
      ['status', 'bluegreen'],
      ['status', 'bluegreen', '-o', 'json'],
      ['get', 'rollout', 'referenced'],
      ['get', 'rollout', 'referenced', '-o', 'view-json'],
      ['status', 'referenced'],
      ['status', 'referenced', '-o', 'json'],
    ]);
  }, 120_000);

  it('--watch --until-complete draws each change and exits 0 when the canary completes', async () => {
    const key = await harness.createRollout(
      testRollout({ name: 'done', replicas: 2, steps: [{ setWeight: 50 }, { pause: { duration: '5s' } }] }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    await harness.patchSpec(key, { template: template('done', 'app:2.0') });
    // The status is still Healthy, but for the previous generation: the watch must not stop at it.
    const watching = run('get', 'rollout', 'done', '--watch', '--until-complete', '--kubeconfig', kubeconfig);
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    const result = await watching;
    expect(result.code).toBe(0);
    const drawn = result.stdout.split(/\n(?=Name: )/);
    expect(drawn.length).toBeGreaterThan(2);
    expect(drawn.some((tree) => /Status: +◌ Progressing/.test(tree))).toBe(true);
    expect(drawn.at(-1)).toMatch(/Status: +✔ Healthy\n/);
    expect(drawn.at(-1)).toMatch(/Images: +app:2\.0 \(stable\)\n/);
  }, 90_000);

  it('--until-complete exits 1 when the canary is aborted', async () => {
    const key = await harness.createRollout(
      testRollout({ name: 'aborted', replicas: 2, steps: [{ setWeight: 50 }, { pause: {} }] }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    await harness.patchSpec(key, { template: template('aborted', 'app:2.0') });
    const watching = run(
      'get',
      'rollout',
      'aborted',
      '--until-complete',
      '-o',
      'json',
      '--kubeconfig',
      kubeconfig,
    );
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });
    await abortRollout(harness.clients, key);
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Degraded', { timeoutMs: 30_000 });
    const result = await watching;
    expect(result.code).toBe(1);
    // As `kubectl get -w -o json`: the Rollout as the API server returns it, once per change, the last Degraded.
    const documents = result.stdout
      .split(/\n(?=\{)/)
      .map((text) => JSON.parse(text) as { kind: string; status?: { phase?: string } });
    expect(new Set(documents.map((rollout) => rollout.kind))).toEqual(new Set(['Rollout']));
    expect(documents.map((rollout) => rollout.status?.phase)).toContain('Paused');
    expect(documents.at(-1)?.status?.phase).toBe('Degraded');
  }, 90_000);
});
