// Evicting pods through the sandbox as Rollgate's restarts will: pods/eviction, PodDisruptionBudgets, kubectl.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  AppsV1Api,
  CoreV1Api,
  PolicyV1Api,
  type V1Pod,
  type V1PodDisruptionBudgetSpec,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { failure } from '../../conformance/support/conformance-cluster.ts';

const NS = 'default';
let clock: ManualClock;
let sandbox: Sandbox;
let core: CoreV1Api;
let apps: AppsV1Api;
let policy: PolicyV1Api;

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2026, 0, 1));
  sandbox = await startSandbox({ clock, readyDelayMs: 1000 });
  core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
  apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);
  policy = sandbox.kubeConfig.makeApiClient(PolicyV1Api);
});
afterEach(async () => {
  await sandbox.stop();
});

/** A ReplicaSet whose pods (labelled app=<name>) are all Ready when this returns. */
async function readyReplicaSet(name: string, replicas: number): Promise<V1Pod[]> {
  await apps.createNamespacedReplicaSet({
    namespace: NS,
    body: {
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
        },
      },
    },
  });
  await sandbox.advance(1000);
  const pods = await podsOf(name);
  expect(pods.filter(isReady)).toHaveLength(replicas);
  return pods;
}

async function podsOf(app: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: NS, labelSelector: `app=${app}` })).items;
}

const isReady = (pod: V1Pod): boolean =>
  pod.metadata?.deletionTimestamp === undefined &&
  (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);

const nameOf = (pod: V1Pod | undefined): string => pod?.metadata?.name ?? '';

async function createBudget(name: string, app: string, spec: Omit<V1PodDisruptionBudgetSpec, 'selector'>) {
  await policy.createNamespacedPodDisruptionBudget({
    namespace: NS,
    body: { metadata: { name }, spec: { ...spec, selector: { matchLabels: { app } } } },
  });
  await sandbox.settle();
}

async function evict(
  pod: string,
  options: { dryRun?: string; deleteOptions?: Record<string, unknown> } = {},
): Promise<void> {
  await core.createNamespacedPodEviction({
    name: pod,
    namespace: NS,
    body: {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: pod, namespace: NS },
      ...(options.deleteOptions ? { deleteOptions: options.deleteOptions } : {}),
    },
    ...(options.dryRun ? { dryRun: options.dryRun } : {}),
  });
}

async function budgetStatus(name: string) {
  return (await policy.readNamespacedPodDisruptionBudget({ name, namespace: NS })).status;
}

async function isTerminating(pod: string): Promise<boolean> {
  const live = await core.readNamespacedPod({ name: pod, namespace: NS });
  return live.metadata?.deletionTimestamp !== undefined;
}

describe('pods/eviction', () => {
  it('answers 201 with a Success Status and deletes the pod; the ReplicaSet replaces it', async () => {
    const [victim, ...others] = await readyReplicaSet('web', 3);
    const response = await fetch(`${sandbox.url}/api/v1/namespaces/${NS}/pods/${nameOf(victim)}/eviction`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: nameOf(victim) } }),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      code: 201,
    });
    expect(await isTerminating(nameOf(victim))).toBe(true);
    await sandbox.advance(1000);
    const pods = await podsOf('web');
    expect(pods.map(nameOf)).not.toContain(nameOf(victim));
    expect(pods.filter(isReady)).toHaveLength(3);
    for (const other of others) expect(pods.map(nameOf)).toContain(nameOf(other));
  });

  it('honours deleteOptions.gracePeriodSeconds=0 (the pod is gone at once)', async () => {
    const [victim] = await readyReplicaSet('now', 1);
    await evict(nameOf(victim), { deleteOptions: { gracePeriodSeconds: 0 } });
    expect((await podsOf('now')).map(nameOf)).not.toContain(nameOf(victim));
  });

  it('refuses with 429 and the budget named when minAvailable would be violated', async () => {
    const pods = await readyReplicaSet('api', 3);
    await createBudget('api-pdb', 'api', { minAvailable: 3 });
    const refused = await failure(evict(nameOf(pods[0])));
    expect(refused.code).toBe(429);
    expect(refused.status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      code: 429,
      details: {
        causes: [
          {
            reason: 'DisruptionBudget',
            message: 'The disruption budget api-pdb needs 3 healthy pods and has 3 currently',
          },
        ],
      },
    });
    expect(await isTerminating(nameOf(pods[0]))).toBe(false);
  });

  it('spends the budget at once: a second eviction right after the first is refused until a replacement is Ready', async () => {
    const pods = await readyReplicaSet('pay', 3);
    await createBudget('pay-pdb', 'pay', { minAvailable: 2 });
    expect(await budgetStatus('pay-pdb')).toMatchObject({ disruptionsAllowed: 1, currentHealthy: 3 });
    await evict(nameOf(pods[0]));
    // No settle in between: the budget is checked against the pods as they are now.
    const refused = await failure(evict(nameOf(pods[1])));
    expect(refused.code).toBe(429);
    expect(refused.status.details?.causes?.[0]?.message).toBe(
      'The disruption budget pay-pdb needs 2 healthy pods and has 2 currently',
    );
    expect(await budgetStatus('pay-pdb')).toMatchObject({ disruptionsAllowed: 0, currentHealthy: 2 });
    await sandbox.advance(1000);
    expect(await budgetStatus('pay-pdb')).toMatchObject({ disruptionsAllowed: 1, currentHealthy: 3 });
    await evict(nameOf(pods[1]));
    expect(await isTerminating(nameOf(pods[1]))).toBe(true);
  });

  it('scales a maxUnavailable percentage over the ReplicaSet replicas, rounding up', async () => {
    const pods = await readyReplicaSet('cart', 4);
    await createBudget('cart-pdb', 'cart', { maxUnavailable: '30%' });
    // 30% of 4 is 1.2, rounded up to 2 pods that may be unavailable: 2 must stay healthy.
    expect(await budgetStatus('cart-pdb')).toMatchObject({
      expectedPods: 4,
      desiredHealthy: 2,
      currentHealthy: 4,
      disruptionsAllowed: 2,
      observedGeneration: 1,
    });
    await evict(nameOf(pods[0]));
    await evict(nameOf(pods[1]));
    const refused = await failure(evict(nameOf(pods[2])));
    expect(refused.code).toBe(429);
    expect(refused.status.details?.causes?.[0]?.message).toBe(
      'The disruption budget cart-pdb needs 2 healthy pods and has 2 currently',
    );
  });

  it('lets an unready pod go without spending the budget while the budget is met (IfHealthyBudget), or always with AlwaysAllow', async () => {
    const ready = await readyReplicaSet('mix', 2);
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: {
          name: 'mix-stuck',
          labels: { app: 'mix' },
          annotations: { 'sandbox.rollgate.dev/behavior': 'never-ready' },
        },
        spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      },
    });
    await sandbox.advance(1000);
    await createBudget('mix-pdb', 'mix', { minAvailable: 2 });
    expect(await budgetStatus('mix-pdb')).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 0 });
    expect((await failure(evict(nameOf(ready[0])))).code).toBe(429);
    await evict('mix-stuck', { dryRun: 'All' });
    await policy.patchNamespacedPodDisruptionBudget({
      name: 'mix-pdb',
      namespace: NS,
      body: [{ op: 'replace', path: '/spec/minAvailable', value: 3 }],
    });
    await sandbox.settle();
    const refused = await failure(evict('mix-stuck'));
    expect(refused.status.details?.causes?.[0]?.message).toBe(
      'The disruption budget mix-pdb needs 3 healthy pods and has 2 currently',
    );
    await policy.patchNamespacedPodDisruptionBudget({
      name: 'mix-pdb',
      namespace: NS,
      body: [{ op: 'add', path: '/spec/unhealthyPodEvictionPolicy', value: 'AlwaysAllow' }],
    });
    await evict('mix-stuck');
    expect(await isTerminating('mix-stuck')).toBe(true);
  });

  it('answers 500 when two budgets select the pod', async () => {
    const [victim] = await readyReplicaSet('dup', 2);
    await createBudget('dup-a', 'dup', { maxUnavailable: 1 });
    await createBudget('dup-b', 'dup', { minAvailable: 1 });
    const refused = await failure(evict(nameOf(victim)));
    expect(refused.code).toBe(500);
    expect(refused.status).toMatchObject({
      status: 'Failure',
      message:
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      code: 500,
    });
    expect(await isTerminating(nameOf(victim))).toBe(false);
  });

  it('answers 409 when the uid precondition does not match, leaving pod and budget alone', async () => {
    const [victim] = await readyReplicaSet('pre', 2);
    await createBudget('pre-pdb', 'pre', { maxUnavailable: 1 });
    const before = await policy.readNamespacedPodDisruptionBudget({ name: 'pre-pdb', namespace: NS });
    const refused = await failure(
      evict(nameOf(victim), { deleteOptions: { preconditions: { uid: 'not-the-uid' } } }),
    );
    expect(refused.code).toBe(409);
    expect(refused.status.reason).toBe('Conflict');
    expect(refused.status.message).toContain('Precondition failed: UID in precondition: not-the-uid');
    expect(await isTerminating(nameOf(victim))).toBe(false);
    const after = await policy.readNamespacedPodDisruptionBudget({ name: 'pre-pdb', namespace: NS });
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    expect(after.status?.disruptionsAllowed).toBe(1);
  });

  it('succeeds for a pod that is already terminating, whatever the budget says', async () => {
    const [victim] = await readyReplicaSet('bye', 2);
    await createBudget('bye-pdb', 'bye', { minAvailable: 2 });
    await core.deleteNamespacedPod({ name: nameOf(victim), namespace: NS });
    expect(await isTerminating(nameOf(victim))).toBe(true);
    await expect(evict(nameOf(victim))).resolves.toBeUndefined();
  });

  it('checks without deleting on dryRun=All, in the query or in deleteOptions', async () => {
    const pods = await readyReplicaSet('dry', 2);
    await createBudget('dry-pdb', 'dry', { maxUnavailable: 1 });
    const before = await policy.readNamespacedPodDisruptionBudget({ name: 'dry-pdb', namespace: NS });
    await evict(nameOf(pods[0]), { dryRun: 'All' });
    await evict(nameOf(pods[0]), { deleteOptions: { dryRun: ['All'] } });
    expect(await isTerminating(nameOf(pods[0]))).toBe(false);
    const after = await policy.readNamespacedPodDisruptionBudget({ name: 'dry-pdb', namespace: NS });
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    await policy.patchNamespacedPodDisruptionBudget({
      name: 'dry-pdb',
      namespace: NS,
      body: [{ op: 'replace', path: '/spec/maxUnavailable', value: 0 }],
    });
    await sandbox.settle();
    expect((await failure(evict(nameOf(pods[0]), { dryRun: 'All' }))).code).toBe(429);
  });

  it('answers 404 for a missing pod and 405 for anything but POST', async () => {
    const missing = await failure(evict('nobody'));
    expect(missing.code).toBe(404);
    expect(missing.status).toMatchObject({ reason: 'NotFound', message: 'pods "nobody" not found' });
    const [pod] = await readyReplicaSet('verbs', 1);
    const get = await fetch(`${sandbox.url}/api/v1/namespaces/${NS}/pods/${nameOf(pod)}/eviction`);
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ reason: 'MethodNotAllowed', code: 405 });
  });

  it('is listed in discovery next to policy/v1 poddisruptionbudgets', async () => {
    const coreList = (await (await fetch(`${sandbox.url}/api/v1`)).json()) as {
      resources: Array<Record<string, unknown>>;
    };
    expect(coreList.resources.find((r) => r.name === 'pods/eviction')).toEqual({
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
    const policyList = (await (await fetch(`${sandbox.url}/apis/policy/v1`)).json()) as {
      resources: Array<Record<string, unknown>>;
    };
    expect(policyList.resources.map((r) => r.name)).toEqual([
      'poddisruptionbudgets',
      'poddisruptionbudgets/status',
    ]);
    expect(policyList.resources[0]).toMatchObject({ kind: 'PodDisruptionBudget', shortNames: ['pdb'] });
  });
});

describe('PodDisruptionBudget through the real kubectl', () => {
  const run = promisify(execFile);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollgate-pdb-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function kubectl(...args: string[]): Promise<string> {
    const kubeconfig = join(dir, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
    const { stdout } = await run(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
      { timeout: 30_000 },
    );
    return stdout;
  }

  it('applies a PDB and shows the status the disruption controller keeps', async () => {
    await readyReplicaSet('shop', 3);
    const manifest = join(dir, 'pdb.yaml');
    writeFileSync(
      manifest,
      `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: shop
spec:
  minAvailable: 50%
  selector:
    matchLabels: {app: shop}
`,
    );
    expect(await kubectl('apply', '-f', manifest)).toContain('poddisruptionbudget.policy/shop created');
    await sandbox.settle();
    const pdb = JSON.parse(await kubectl('get', 'pdb', 'shop', '-o', 'json')) as {
      status: Record<string, unknown>;
    };
    // 50% of 3 rounds up to 2 pods that must stay healthy.
    expect(pdb.status).toEqual({
      observedGeneration: 1,
      disruptionsAllowed: 1,
      currentHealthy: 3,
      desiredHealthy: 2,
      expectedPods: 3,
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: 'True',
          observedGeneration: 1,
          lastTransitionTime: '2026-01-01T00:00:01Z',
          reason: 'SufficientPods',
          message: '',
        },
      ],
    });
    expect(await kubectl('get', 'pdb')).toMatch(
      /NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\nshop\s+50%\s+N\/A\s+1\s+0s/,
    );
    // kubectl always patches spec.selector (its patchStrategy is replace), so it says `configured`
    // as against a real cluster; the server sees no change and keeps the resourceVersion.
    const before = await kubectl('get', 'pdb', 'shop', '-o', 'jsonpath={.metadata.resourceVersion}');
    expect(await kubectl('apply', '-f', manifest)).toContain('poddisruptionbudget.policy/shop configured');
    expect(await kubectl('get', 'pdb', 'shop', '-o', 'jsonpath={.metadata.resourceVersion}')).toBe(before);
    // That replace strategy also means a label dropped from the selector is gone, not merged back in.
    writeFileSync(
      manifest,
      readFileSync(manifest, 'utf8').replace('matchLabels: {app: shop}', 'matchLabels: {tier: web}'),
    );
    await kubectl('apply', '-f', manifest);
    expect(await kubectl('get', 'pdb', 'shop', '-o', 'jsonpath={.spec.selector.matchLabels}')).toBe(
      '{"tier":"web"}',
    );
  });
});
