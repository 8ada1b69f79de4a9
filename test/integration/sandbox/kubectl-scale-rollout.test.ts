// The real kubectl scales a Rollout through its /scale subresource in the sandbox, and /scale reports the
// pods Rollgate runs once it has reconciled (what an HPA reads).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAMESPACE, ReconcileHarness, isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';

const run = promisify(execFile);
const SCALE_PATH = `/apis/rollgate.dev/v1alpha1/namespaces/${NAMESPACE}/rollouts/web/scale`;

let harness: ReconcileHarness;
let dir: string;
let kubeconfig: string;

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(
    'kubectl',
    ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
    { timeout: 30_000 },
  );
  return stdout;
}

interface Scale {
  kind: string;
  apiVersion: string;
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

async function rawScale(): Promise<Scale> {
  return JSON.parse(await kubectl('get', '--raw', SCALE_PATH)) as Scale;
}

/** Pods of the rollout that are not on their way out. */
async function runningPods(): Promise<number> {
  const pods = await harness.clients.core.listNamespacedPod({
    namespace: NAMESPACE,
    labelSelector: 'app=web',
  });
  return pods.items.filter((pod) => pod.metadata?.deletionTimestamp === undefined).length;
}

beforeAll(async () => {
  harness = await ReconcileHarness.start();
  ({ kubeconfig, dir } = await harness.writeKubeconfig());
});

afterAll(async () => {
  await harness.stop();
});

describe('kubectl scale on a Rollout', () => {
  it('writes spec.replicas through /scale, and /scale reports the pods Rollgate runs', async () => {
    const key = await harness.createRollout(testRollout({ name: 'web', replicas: 4 }));
    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    expect(await runningPods()).toBe(4);
    expect(await rawScale()).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 4 },
      status: { replicas: 4, selector: 'app=web' },
    });

    expect(await kubectl('scale', 'rollout.rollgate.dev/web', '--replicas=5')).toContain(
      'rollout.rollgate.dev/web scaled',
    );
    // Only the desired count moved; status still says what runs until Rollgate acts on it.
    expect(await rawScale()).toMatchObject({ spec: { replicas: 5 }, status: { replicas: 4 } });
    expect((await harness.observe(key)).rollout.spec.replicas).toBe(5);

    await harness.runUntil(key, isFullyPromoted, { timeoutMs: 60_000 });
    expect(await runningPods()).toBe(5);
    expect(await rawScale()).toMatchObject({
      spec: { replicas: 5 },
      status: { replicas: 5, selector: 'app=web' },
    });

    // kubectl's precondition reads /scale and compares before it writes.
    const refused = await kubectl(
      'scale',
      'rollout.rollgate.dev/web',
      '--current-replicas=4',
      '--replicas=2',
    ).catch((err: { stderr?: string }) => err.stderr ?? String(err));
    expect(refused).toContain('Expected replicas to be 4, was 5');
    expect((await rawScale()).spec.replicas).toBe(5);
  });
});
