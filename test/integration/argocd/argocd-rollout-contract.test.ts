// Argo CD's own Rollout health check and actions (argo-cd's resource_customizations, read from a checkout at
// test time) over Rollouts a real `rollgate reconciler` drives on the sandbox: each state shows the health and
// message Argo Rollouts' own status would give, and each action, sent the way Argo CD's server sends it (a
// merge patch of the script's output against the live object, status subresource first), is obeyed.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { healthOf } from '../../../src/health/health-rules.ts';
import { argoCdCustomizations } from '../../support/argocd-customizations.ts';
import { argoCdActionPatches, argoCdHealth, type ArgoCdHealth, type Json } from '../../support/argocd-lua.ts';
import { eventually } from '../../support/eventually.ts';
import {
  startRollgateProcessScene,
  type RollgateProcessScene,
} from '../../support/rollgate-process-scene.ts';

/**
 * The API group of the Rollouts under test: argoproj.io, driven in controller mode (docs/controller-mode.md),
 * as Argo CD sees them beside Argo Rollouts. Our rollgate.dev health check reads the same status shape, so it
 * runs over the same Rollouts.
 */
const GROUP = 'argoproj.io';
const NAMESPACE = 'default';
const argocd = argoCdCustomizations(import.meta.filename);

/** Our own health check for rollgate.dev Rollouts, as shipped in deploy/ (the argocd-cm snippet). */
const OUR_SNIPPET = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'deploy',
  'argocd',
  'argocd-cm-rollgate.yaml',
);
const OUR_HEALTH_KEY = 'resource.customizations.health.rollgate.dev_Rollout';
function ourHealthScript(): string {
  const snippet = parse(readFileSync(OUR_SNIPPET, 'utf8')) as { data?: Record<string, string> };
  const script = snippet.data?.[OUR_HEALTH_KEY];
  if (script === undefined) throw new Error(`${OUR_SNIPPET} has no data.${OUR_HEALTH_KEY}`);
  return script;
}

/** The Rollout as Argo CD reads it (its live object). */
interface LiveRollout {
  metadata: { name: string; generation?: number; annotations?: Record<string, string> };
  spec: { paused?: boolean; restartAt?: string; template: unknown };
  status?: {
    phase?: string;
    message?: string;
    abort?: boolean;
    currentStepIndex?: number;
    currentPodHash?: string;
    stableRS?: string;
    restartedAt?: string;
    observedGeneration?: string | number;
    pauseConditions?: { reason: string }[];
    blueGreen?: { activeSelector?: string; previewSelector?: string };
  };
}

interface RolloutOptions {
  replicas?: number;
  steps?: Json[];
  blueGreen?: boolean;
  progressDeadlineSeconds?: number;
}

function rolloutManifest(name: string, image: string, options: RolloutOptions = {}): Record<string, Json> {
  const strategy: Json = options.blueGreen
    ? {
        blueGreen: {
          activeService: `${name}-active`,
          previewService: `${name}-preview`,
          autoPromotionEnabled: false,
          scaleDownDelaySeconds: 0,
        },
      }
    : { canary: { steps: options.steps ?? [{ setWeight: 50 }, { pause: {} }] } };
  return {
    apiVersion: `${GROUP}/v1alpha1`,
    kind: 'Rollout',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      replicas: options.replicas ?? 2,
      selector: { matchLabels: { app: name } },
      ...(options.progressDeadlineSeconds !== undefined
        ? { progressDeadlineSeconds: options.progressDeadlineSeconds }
        : {}),
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image }] },
      },
      strategy,
    },
  };
}

function service(name: string, app: string): Record<string, Json> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NAMESPACE },
    spec: { selector: { app }, ports: [{ port: 80, targetPort: 8080 }] },
  };
}

describe.skipIf(argocd.missing)(`Argo CD's Rollout health check and actions over ${GROUP} Rollouts`, () => {
  let scene: RollgateProcessScene;
  const resource = `rollouts.${GROUP}`;

  /** Runs kubectl against the sandbox (never synchronously: the sandbox answers from this process). */
  function kubectl(args: string[], input?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn('kubectl', ['--kubeconfig', scene.kubeconfig, '-n', NAMESPACE, ...args]);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0
          ? resolve(stdout)
          : reject(new Error(`kubectl ${args.join(' ')} failed: ${stderr.trim()}`)),
      );
      child.stdin.end(input ?? '');
    });
  }
  // The live object read through the sandbox's own client, not a kubectl per read: `until` polls it every
  // 200 ms, and those kubectl runs were three quarters of this file's CPU (docs/BENCHMARKS.md). What Argo CD
  // is shown is the same JSON either way; kubectl still sends every write, as Argo CD's server would.
  const live = async (name: string): Promise<LiveRollout> =>
    (await scene.sandbox.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'rollouts',
      name,
    })) as LiveRollout;
  const apply = async (...objects: Record<string, Json>[]): Promise<void> => {
    await kubectl(
      ['apply', '--server-side', '--field-manager=argocd-controller', '--validate=false', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
    );
  };
  const patch = async (name: string, body: Json, subresource?: 'status'): Promise<void> => {
    const args = ['patch', resource, name, '--type', 'merge', '-p', JSON.stringify(body)];
    await kubectl(subresource ? [...args, '--subresource=status'] : args);
  };

  /** What Argo CD shows for the live Rollout, from its own health.lua. */
  const health = (rollout: LiveRollout): ArgoCdHealth =>
    argoCdHealth(
      argocd.script('argoproj.io', 'Rollout', 'health.lua'),
      'health.lua',
      rollout as unknown as Json,
    );

  /**
   * Argo CD's own health.lua gives `want` for the live Rollout, and so does our rollgate.dev health check from
   * deploy/ (run with only the libraries Argo CD opens for an argocd-cm script), and so does Rollgate's own
   * health rule (what a sync's waves and a source's health read).
   */
  function expectHealth(rollout: LiveRollout, want: ArgoCdHealth): void {
    expect(health(rollout), "Argo CD's health.lua").toEqual(want);
    expect(
      healthOf({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Rollout', ...rollout }),
      "Rollgate's health rule",
    ).toEqual(want);
    expect(
      argoCdHealth(ourHealthScript(), OUR_HEALTH_KEY, rollout as unknown as Json, { restricted: true }),
      "deploy/argocd's health check",
    ).toEqual(want);
  }

  /** Runs Argo CD's action on the live Rollout and sends its patches as Argo CD's server does. */
  async function runAction(name: string, action: string): Promise<void> {
    const script = argocd.script('argoproj.io', 'Rollout', `actions/${action}/action.lua`);
    const patches = argoCdActionPatches(
      script,
      action,
      (await live(name)) as unknown as Record<string, Json>,
    );
    if (patches.status) await patch(name, patches.status, 'status');
    if (patches.object) await patch(name, patches.object);
  }

  /** Waits until the live Rollout passes `check`, and returns it. */
  const until = (name: string, what: string, check: (r: LiveRollout) => boolean, timeoutMs = 30_000) =>
    eventually(
      `${name}: ${what}`,
      async () => {
        const rollout = await live(name);
        if (check(rollout)) return rollout;
        // Thrown, so a timeout says what the status was at the end.
        throw new Error(
          `status ${JSON.stringify(rollout.status)}, generation ${rollout.metadata.generation}`,
        );
      },
      { timeoutMs, intervalMs: 200 },
    );

  const observed = (r: LiveRollout): boolean =>
    String(r.status?.observedGeneration ?? '') === String(r.metadata.generation ?? '');
  const healthy = (r: LiveRollout): boolean =>
    observed(r) && r.status?.phase === 'Healthy' && r.status.stableRS === r.status.currentPodHash;
  const pausedAt = (step: number) => (r: LiveRollout) =>
    observed(r) &&
    r.status?.currentStepIndex === step &&
    (r.status.pauseConditions ?? []).some((c) => c.reason === 'CanaryPauseStep');

  /** A Rollout at its first revision, Healthy, then moved to `image` (with `template` extras). */
  async function updated(name: string, options: RolloutOptions, template: Record<string, Json> = {}) {
    if (options.blueGreen) await apply(service(`${name}-active`, name), service(`${name}-preview`, name));
    await apply(rolloutManifest(name, 'app:1.0', options));
    await until(name, 'the first revision Healthy', healthy);
    const next = rolloutManifest(name, 'app:2.0', options);
    const spec = next.spec as { template: { metadata: Record<string, Json> } };
    Object.assign(spec.template.metadata, template);
    await apply(next);
  }
  const neverReady = { annotations: { 'sandbox.rollgate.dev/behavior': 'never-ready' } };

  /** The canary ReplicaSet's name (for Argo's messages that name it). */
  const replicaSetOf = (name: string, hash: string): Promise<string> =>
    kubectl([
      'get',
      'rs',
      '-l',
      `rollouts-pod-template-hash=${hash},app=${name}`,
      '-o',
      'jsonpath={.items[0].metadata.name}',
    ]);
  /** The `rollout.argoproj.io/revision` annotation of a ReplicaSet or the Rollout (what Argo's plugin lists). */
  const revisionAnnotationOf = (kind: 'ReplicaSet' | 'Rollout', name: string): Promise<string> =>
    kubectl([
      'get',
      kind === 'Rollout' ? `rollouts.${GROUP}` : 'rs',
      name,
      '-o',
      String.raw`jsonpath={.metadata.annotations.rollout\.argoproj\.io/revision}`,
    ]);

  beforeAll(async () => {
    scene = await startRollgateProcessScene({ redisUrl: inject('redisUrl'), runDir: inject('runDir') });
    await scene
      .start('reconciler', 'reconciler', ['--set', `controller.groups=${JSON.stringify([GROUP])}`])
      .started();
  }, 90_000);

  afterAll(async () => {
    await scene?.stop();
  });

  describe('health, as Argo Rollouts would show it', () => {
    it('healthy: Healthy, no message', async () => {
      await apply(rolloutManifest('healthy', 'app:1.0'));
      const rollout = await until('healthy', 'Healthy', healthy);
      expectHealth(rollout, { status: 'Healthy', message: '' });
    }, 60_000);

    it('progressing (canary pods not ready yet): Progressing, "more replicas need to be updated"', async () => {
      await updated('progressing', { progressDeadlineSeconds: 3600 }, neverReady);
      const rollout = await until(
        'progressing',
        'the canary scaled up, not ready',
        (r) =>
          observed(r) && r.status?.currentPodHash !== r.status?.stableRS && r.status?.phase === 'Progressing',
      );
      expectHealth(rollout, { status: 'Progressing', message: 'more replicas need to be updated' });
    }, 60_000);

    it('paused at a step: Suspended, CanaryPauseStep', async () => {
      await updated('paused-step', {});
      const rollout = await until('paused-step', 'paused at step 1', pausedAt(1));
      expectHealth(rollout, { status: 'Suspended', message: 'CanaryPauseStep' });
    }, 60_000);

    it('paused by the user (spec.paused): Suspended, "manually paused"', async () => {
      await updated('paused-user', { progressDeadlineSeconds: 3600 }, neverReady);
      await until(
        'paused-user',
        'the canary started',
        (r) => observed(r) && r.status?.currentPodHash !== r.status?.stableRS,
      );
      await patch('paused-user', { spec: { paused: true } });
      const rollout = await until(
        'paused-user',
        'phase Paused',
        (r) => observed(r) && r.status?.phase === 'Paused',
      );
      expectHealth(rollout, { status: 'Suspended', message: 'manually paused' });
    }, 60_000);

    it('aborted: Degraded, "RolloutAborted: Rollout aborted update to revision 2"', async () => {
      await updated('aborted', {});
      await until('aborted', 'paused at step 1', pausedAt(1));
      await patch('aborted', { status: { abort: true } }, 'status');
      const rollout = await until('aborted', 'phase Degraded', (r) => r.status?.phase === 'Degraded');
      // Argo's exact message: the revision by its number, the second ReplicaSet the Rollout ever had,
      // which the canary's ReplicaSet and the Rollout both carry (rollout.argoproj.io/revision).
      expectHealth(rollout, {
        status: 'Degraded',
        message: 'RolloutAborted: Rollout aborted update to revision 2',
      });
      const canary = await replicaSetOf('aborted', rollout.status?.currentPodHash ?? '');
      expect(await revisionAnnotationOf('ReplicaSet', canary)).toBe('2');
      expect(await revisionAnnotationOf('Rollout', 'aborted')).toBe('2');
    }, 60_000);

    it('degraded (progress deadline exceeded): Degraded, "ProgressDeadlineExceeded: ReplicaSet … has timed out progressing."', async () => {
      await updated('deadline', { progressDeadlineSeconds: 2 }, neverReady);
      const rollout = await until(
        'deadline',
        'phase Degraded',
        (r) => observed(r) && r.status?.phase === 'Degraded',
      );
      const canary = await replicaSetOf('deadline', rollout.status?.currentPodHash ?? '');
      expectHealth(rollout, {
        status: 'Degraded',
        message: `ProgressDeadlineExceeded: ReplicaSet "${canary}" has timed out progressing.`,
      });
    }, 60_000);

    it('blue-green, preview up and waiting for promotion: Suspended, BlueGreenPause', async () => {
      await updated('bg-preview', { blueGreen: true });
      const rollout = await until(
        'bg-preview',
        'the preview paused',
        (r) => observed(r) && (r.status?.pauseConditions ?? []).some((c) => c.reason === 'BlueGreenPause'),
      );
      expectHealth(rollout, { status: 'Suspended', message: 'BlueGreenPause' });
    }, 60_000);

    it('blue-green, active: Healthy, no message; the first revision is the active selector', async () => {
      await apply(service('bg-active-active', 'bg-active'), service('bg-active-preview', 'bg-active'));
      await apply(rolloutManifest('bg-active', 'app:1.0', { blueGreen: true }));
      const rollout = await until('bg-active', 'Healthy', healthy);
      expectHealth(rollout, { status: 'Healthy', message: '' });
      // As Argo: the active Service selects the first revision and status.blueGreen says so (what the
      // plugin and the dashboard show as the active revision), before any switch.
      const hash = rollout.status?.currentPodHash ?? '';
      expect(rollout.status?.blueGreen?.activeSelector).toBe(hash);
      const selector = await kubectl([
        'get',
        'service',
        'bg-active-active',
        '-o',
        'jsonpath={.spec.selector.rollouts-pod-template-hash}',
      ]);
      expect(selector).toBe(hash);
    }, 60_000);
  });

  describe("Argo CD's actions, sent as Argo CD sends them, obeyed", () => {
    const steps: Json[] = [{ setWeight: 25 }, { pause: {} }, { setWeight: 50 }, { pause: {} }];

    it('abort aborts (Degraded, canary scaled to 0), then retry starts the steps over', async () => {
      await updated('act-abort', { steps });
      await until('act-abort', 'paused at step 1', pausedAt(1));
      await runAction('act-abort', 'abort');
      const aborted = await until(
        'act-abort',
        'aborted',
        (r) => r.status?.abort === true && r.status.phase === 'Degraded',
      );
      expect(health(aborted).status).toBe('Degraded');
      const canary = await replicaSetOf('act-abort', aborted.status?.currentPodHash ?? '');
      await eventually(
        'the aborted canary scaled to 0',
        async () => (await kubectl(['get', 'rs', canary, '-o', 'jsonpath={.spec.replicas}'])) === '0',
      );
      await runAction('act-abort', 'retry');
      const retried = await until('act-abort', 'paused at step 1 again', pausedAt(1));
      expect(retried.status?.abort).toBeFalsy();
      expectHealth(retried, { status: 'Suspended', message: 'CanaryPauseStep' });
    }, 90_000);

    it('resume resumes a step pause: the canary goes on to the next pause', async () => {
      await updated('act-resume', { steps });
      await until('act-resume', 'paused at step 1', pausedAt(1));
      await runAction('act-resume', 'resume');
      const next = await until('act-resume', 'paused at step 3', pausedAt(3));
      expectHealth(next, { status: 'Suspended', message: 'CanaryPauseStep' });
    }, 90_000);

    it('skip-current-step skips the pause it is at', async () => {
      await updated('act-skip', { steps });
      await until('act-skip', 'paused at step 1', pausedAt(1));
      await runAction('act-skip', 'skip-current-step');
      await until('act-skip', 'paused at step 3', pausedAt(3));
    }, 90_000);

    it('promote-full promotes the canary to stable at once', async () => {
      await updated('act-promote', { steps });
      const paused = await until('act-promote', 'paused at step 1', pausedAt(1));
      await runAction('act-promote', 'promote-full');
      const promoted = await until('act-promote', 'Healthy at the new revision', healthy);
      expect(promoted.status?.stableRS).toBe(paused.status?.currentPodHash);
      expectHealth(promoted, { status: 'Healthy', message: '' });
    }, 90_000);

    it('pause pauses (manually paused, no step taken), resume lets it go on', async () => {
      await updated('act-pause', {
        steps: [{ setWeight: 25 }, { pause: { duration: '2s' } }, { setWeight: 50 }, { pause: {} }],
      });
      await until('act-pause', 'at step 1', (r) => observed(r) && (r.status?.currentStepIndex ?? 0) >= 1);
      await runAction('act-pause', 'pause');
      const paused = await until(
        'act-pause',
        'manually paused',
        (r) => observed(r) && r.status?.phase === 'Paused' && r.status.message === 'manually paused',
      );
      expectHealth(paused, { status: 'Suspended', message: 'manually paused' });
      const index = paused.status?.currentStepIndex ?? 0;
      await runAction('act-pause', 'resume');
      await until(
        'act-pause',
        'past the step it was paused at',
        (r) => (r.status?.currentStepIndex ?? 0) > index,
      );
    }, 90_000);

    it('restart replaces every pod created before it', async () => {
      await apply(rolloutManifest('act-restart', 'app:1.0'));
      await until('act-restart', 'Healthy', healthy);
      const before = await kubectl([
        'get',
        'pods',
        '-l',
        'app=act-restart',
        '-o',
        'jsonpath={.items[*].metadata.uid}',
      ]);
      // Argo CD's action writes restartAt to the second, and a restart replaces the pods created before it
      // (Argo's rule): wait until the clock is past the second the newest pod was created in.
      const created = await kubectl([
        'get',
        'pods',
        '-l',
        'app=act-restart',
        '-o',
        'jsonpath={.items[*].metadata.creationTimestamp}',
      ]);
      const newest = Math.max(...created.split(' ').map((t) => Date.parse(t)));
      await expect.poll(() => Date.now() >= newest + 1_000, { timeout: 5_000, interval: 50 }).toBe(true);
      await runAction('act-restart', 'restart');
      const restartAt = (await live('act-restart')).spec.restartAt;
      expect(restartAt).toBeDefined();
      const restarted = await until(
        'act-restart',
        'restarted and Healthy',
        (r) =>
          r.status?.restartedAt !== undefined &&
          Date.parse(r.status.restartedAt) === Date.parse(restartAt ?? '') &&
          healthy(r),
        60_000,
      );
      // Restarted means every old pod was evicted; an evicted pod may still be terminating for a moment.
      const old = new Set(before.split(' '));
      const leftOver = async () =>
        (await kubectl(['get', 'pods', '-l', 'app=act-restart', '-o', 'jsonpath={.items[*].metadata.uid}']))
          .split(' ')
          .filter((uid) => old.has(uid));
      await expect.poll(leftOver, { timeout: 20_000, interval: 200 }).toEqual([]);
      expectHealth(restarted, { status: 'Healthy', message: '' });
    }, 90_000);
  });
});
