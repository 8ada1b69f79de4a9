// The rollout CLI verbs through `main()` against the sandbox: install, status (text/json), promote, pause/resume, abort/retry, restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as run } from '../../support/run-cli.ts';
import type { RolloutView } from '../../../src/views/rollout-view.ts';
import { ReconcileHarness, isFullyPromoted, testRollout } from './reconcile-harness.ts';

describe('rollout CLI verbs', () => {
  let harness: ReconcileHarness;
  let kubeconfig: string;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
    ({ kubeconfig } = await harness.writeKubeconfig());
  });
  afterAll(async () => {
    await harness.stop();
  });

  it('install is idempotent: the second run reports every CRD unchanged', async () => {
    const first = await run('install', '--kubeconfig', kubeconfig);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /customresourcedefinition\/rollouts\.rollgate\.dev (created|updated|unchanged)/,
    );
    const second = await run('install', '--kubeconfig', kubeconfig);
    expect(second.code).toBe(0);
    const lines = second.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(lines.every((line) => line.endsWith(' unchanged'))).toBe(true);
  });

  it('shows a paused canary and moves it with promote, pause/resume, abort/retry and restart', async () => {
    const key = await harness.createRollout(
      testRollout({
        name: 'cli',
        replicas: 3,
        steps: [{ setWeight: 34 }, { pause: {} }, { setWeight: 67 }, { pause: {} }],
      }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'cli' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Paused', { timeoutMs: 30_000 });

    const json = await run('status', 'cli', '-n', 'default', '--output', 'json', '--kubeconfig', kubeconfig);
    expect(json.code).toBe(0);
    const view = JSON.parse(json.stdout) as RolloutView;
    expect(view.phase).toBe('Paused');
    expect(view.steps.map((s) => s.state)).toEqual(['done', 'current', 'pending', 'pending']);
    expect(view.pauseConditions[0]?.reason).toBe('CanaryPauseStep');
    expect(view.weights.canary).toBe(34);
    expect(view.replicaSets.map((rs) => rs.role).sort()).toEqual(['canary', 'stable']);

    const text = await run('status', 'cli', '--kubeconfig', kubeconfig);
    expect(text.stdout).toContain('▶ 1: pause (until promoted)');
    expect(text.stdout).toMatch(/Status: +Paused/);
    expect(text.stdout).toContain('CanaryPauseStep');

    expect((await run('promote', 'cli', '--kubeconfig', kubeconfig)).stdout).toContain(
      'promoted (pause cleared)',
    );
    expect((await harness.rollout(key)).status?.pauseConditions ?? []).toEqual([]);
    await harness.runUntil(
      key,
      (o) => o.rollout.status?.currentStepIndex === 3 && o.rollout.status.phase === 'Paused',
      {
        timeoutMs: 30_000,
      },
    );

    const paused = await run('pause', 'cli', '--kubeconfig', kubeconfig);
    expect(paused).toMatchObject({ code: 0, stdout: 'rollout cli paused\n' });
    expect((await harness.rollout(key)).spec.paused).toBe(true);
    const resumed = await run('resume', 'cli', '--kubeconfig', kubeconfig);
    expect(resumed).toMatchObject({ code: 0, stdout: 'rollout cli resumed\n' });
    expect((await harness.rollout(key)).spec.paused).toBe(false);

    const abort = await run('abort', 'cli', '--kubeconfig', kubeconfig);
    expect(abort).toMatchObject({ code: 0, stdout: 'rollout cli aborted\n' });
    expect((await harness.rollout(key)).status?.abort).toBe(true);
    await harness.runUntil(key, (o) => o.rollout.status?.phase === 'Degraded', { timeoutMs: 10_000 });
    const aborted = JSON.parse(
      (await run('status', 'cli', '-o', 'json', '--kubeconfig', kubeconfig)).stdout,
    ) as RolloutView;
    expect(aborted.aborted).toBe(true);
    expect(aborted.message).toMatch(/RolloutAborted/);
    const retry = await run('retry', 'cli', '--kubeconfig', kubeconfig);
    expect(retry).toMatchObject({ code: 0, stdout: 'rollout cli retried\n' });
    expect((await harness.rollout(key)).status?.abort).toBe(false);
    // Retry restarts the steps: the canary comes back and stops at the first pause again.
    await harness.runUntil(
      key,
      (o) => o.rollout.status?.phase === 'Paused' && o.rollout.status.abort !== true,
      {
        timeoutMs: 30_000,
      },
    );

    expect((await run('promote', 'cli', '--full', '--kubeconfig', kubeconfig)).code).toBe(0);
    expect((await harness.rollout(key)).status?.promoteFull).toBe(true);
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });

    const restart = await run('restart', 'cli', '--kubeconfig', kubeconfig);
    expect(restart.code).toBe(0);
    const restartAt = (await harness.rollout(key)).spec.restartAt;
    expect(typeof restartAt).toBe('string');
    expect(restart.stdout).toBe(`rollout cli restarts pods created before ${String(restartAt)}\n`);
    expect(Number.isNaN(Date.parse(String(restartAt)))).toBe(false);
    expect((await run('status', 'cli', '--kubeconfig', kubeconfig)).stdout).toContain(
      `Restart:    pods created before ${String(restartAt)} are being replaced (3 left)`,
    );
    // The CLI stamps the machine's time, far ahead of the sandbox's fake clock: for the reconciler the
    // restart is scheduled, and it waits exactly until then.
    const outcome = await harness.reconcile(key);
    expect(outcome).toMatchObject({ kind: 'requeue' });
    const waitMs = outcome.kind === 'requeue' ? outcome.afterMs : 0;
    expect(harness.clock.now().getTime() + waitMs).toBe(Date.parse(String(restartAt)));
    expect(harness.violations).toEqual([]);
  });

  it('promote without a pause skips the current step', async () => {
    const key = await harness.createRollout(
      testRollout({
        name: 'cli-skip',
        replicas: 2,
        steps: [{ setWeight: 50 }, { pause: { duration: '1h' } }, { setWeight: 80 }],
      }),
    );
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
    await harness.patchSpec(key, {
      template: {
        metadata: { labels: { app: 'cli-skip' } },
        spec: { containers: [{ name: 'app', image: 'app:2.0' }] },
      },
    });
    // One reconcile on the fake clock: the canary's pods are not ready yet, so it is at step 0, unpaused.
    await harness.reconcile(key);
    const status = (await harness.rollout(key)).status as {
      currentStepIndex?: number;
      pauseConditions?: unknown[];
    };
    expect(status.currentStepIndex).toBe(0);
    expect(status.pauseConditions ?? []).toEqual([]);
    expect((await run('promote', 'cli-skip', '--kubeconfig', kubeconfig)).stdout).toContain(
      'rollout cli-skip promoted (step 0 skipped)',
    );
    expect((await harness.rollout(key)).status?.currentStepIndex).toBe(1);
  });

  it('exits 1 for a missing rollout and 2 for a missing argument', async () => {
    const missing = await run('status', 'nope', '--kubeconfig', kubeconfig);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('rollout default/nope not found');
    const abortMissing = await run('abort', 'nope', '--kubeconfig', kubeconfig);
    expect(abortMissing.code).toBe(1);
    expect(abortMissing.stderr).toContain('rollout default/nope not found');
    const pauseMissing = await run('pause', 'nope', '--kubeconfig', kubeconfig);
    expect(pauseMissing.code).toBe(1);
    expect(pauseMissing.stderr).toContain('rollout default/nope not found');
    expect((await run('promote', '--kubeconfig', kubeconfig)).code).toBe(2);
  });
});
