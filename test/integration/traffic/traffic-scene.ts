// A whole Rollgate over a sandbox with the upstream route CRDs installed: the traffic e2e tests' stage.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { abortRollout, promoteRollout } from '../../../src/views/rollout-commands.ts';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import type { TempDir } from '../../support/git-fixtures.ts';
import { startSystemScene, type SceneRollout } from '../../support/system-scene.ts';
import { CORPUS_ROOT } from '../../support/upstream-corpus.ts';

/**
 * The upstream CRDs, read in place from the corpus beside the repository. A test file that installs any
 * skips its tests when they are absent (`upstreamCorpus('crds', …)`, test/support/upstream-corpus.ts).
 */
const CORPUS_CRDS = join(CORPUS_ROOT, 'crds');

export interface LiveRolloutStatus extends NonNullable<SceneRollout['status']> {
  trafficRouterError?: { message: string };
}

export interface TrafficScene {
  sandbox: Sandbox;
  clients: KubeClients;
  process: RunningProcess;
  tmp: TempDir;
  /** The real kubectl against the sandbox. */
  kubectl(...args: string[]): Promise<string>;
  /**
   * Applies the objects of YAML text by server-side apply through the client (manager `kubectl`), as
   * `kubectl apply --server-side --force-conflicts` would. `name` names the text in errors. Setting a
   * stage is not what these files test, and each kubectl start cost ~0.2 s of CPU: a new image still goes
   * in by the real `kubectl patch` ({@link setImage}), as a user sends it.
   */
  apply(name: string, yaml: string): Promise<void>;
  /** Creates a namespace through the client. */
  createNamespace(name: string): Promise<void>;
  status(namespace: string, name: string): Promise<LiveRolloutStatus | undefined>;
  /** Waits until the rollout's status satisfies `test`. */
  waitFor(
    what: string,
    namespace: string,
    name: string,
    test: (status: LiveRolloutStatus) => boolean,
  ): Promise<LiveRolloutStatus>;
  replicaSets(namespace: string): Promise<Array<{ name: string; hash: string; replicas: number }>>;
  /** Reconcile jobs run so far (of any rollout): resyncs included, so a test can wait for some. */
  reconcileJobs(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts the sandbox, installs `crdFiles` (names under {@link CORPUS_CRDS}), then a whole Rollgate. The CRDs
 * go in by server-side apply through the client: that the real kubectl installs them is
 * test/integration/sandbox/traffic-crds.test.ts's subject, and here a kubectl run costs CPU for nothing these
 * files test.
 */
export async function startTrafficScene(
  redisUrl: string,
  crdFiles: string[],
  options: { workers?: { resyncMs?: number } } = {},
): Promise<TrafficScene> {
  const scene = await startSystemScene({
    name: 'traffic',
    redisUrl,
    cluster: { sandbox: { readyDelayMs: 50 } },
    async prepare({ clients }) {
      for (const file of crdFiles) {
        const documents = parseAllDocuments(readFileSync(join(CORPUS_CRDS, file), 'utf8'));
        await installCrds(
          clients,
          documents.map((document) => document.toJSON() as object | null).filter((crd) => crd !== null),
        );
      }
    },
    rollgate: {
      processMetrics: false,
      ...(options.workers !== undefined ? { config: { workers: options.workers } } : {}),
    },
  });
  const status = async (namespace: string, name: string): Promise<LiveRolloutStatus | undefined> =>
    (await scene.rollout<{ status?: LiveRolloutStatus }>(name, namespace))?.status;
  return {
    sandbox: scene.sandbox!,
    clients: scene.clients,
    process: scene.rollgate.running,
    tmp: scene.tmp,
    kubectl: (...args) => scene.kubectl(args),
    apply: (name, yaml) => scene.applyThroughClient(name, yaml),
    createNamespace: (name) => scene.createNamespace(name),
    status,
    waitFor: async (what, namespace, name, test) =>
      (
        await scene.waitForRollout<{ status?: LiveRolloutStatus }>(
          what,
          name,
          (live) => live.status !== undefined && test(live.status),
          { namespace },
        )
      ).status!,
    replicaSets: (namespace) => scene.replicaSets(namespace),
    reconcileJobs: () => scene.rollgate.reconcileJobs(),
    stop: () => scene.stop(),
  };
}

/** A canary Rollout (rollgate.dev, as kubectl applies it) walking 20 → 50 → 100 with a manual pause after each. */
export function routedRolloutYaml(options: {
  namespace: string;
  image: string;
  trafficRouting: string;
  /** canaryService/stableService set (default true; Istio with subsets needs none). */
  services?: boolean;
}): string {
  return `apiVersion: rollgate.dev/v1alpha1
kind: Rollout
metadata:
  name: web
  namespace: ${options.namespace}
spec:
  replicas: 4
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: ${options.image}
  strategy:
    canary:
${options.services === false ? '' : '      canaryService: web-canary\n      stableService: web-stable\n'}      scaleDownDelaySeconds: 1
      abortScaleDownDelaySeconds: 1
      trafficRouting:
${options.trafficRouting
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => `        ${line}`)
  .join('\n')}
      steps:
        - setWeight: 20
        - pause: {}
        - setWeight: 50
        - pause: {}
        - setWeight: 100
        - pause: {}
`;
}

/** The stable and canary Services both routers weight. */
export function servicesYaml(namespace: string): string {
  return ['web-stable', 'web-canary']
    .map(
      (name) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  selector:
    app: web
  ports:
    - port: 80
      targetPort: 8080
`,
    )
    .join('---\n');
}

/** Objects seen by a watch, in the order the API server wrote them (resourceVersion is global in the sandbox). */
export interface WatchedChanges {
  seen: Array<{ resourceVersion: number; object: Record<string, unknown> }>;
  stop(): void;
}

/** Watches `path` (a collection URL) from now on, recording every object written. */
export async function recordChanges(scene: TrafficScene, path: string): Promise<WatchedChanges> {
  const { Watch } = await import('@kubernetes/client-node');
  const seen: WatchedChanges['seen'] = [];
  const watch = new Watch(scene.sandbox.kubeConfig);
  const request = await watch.watch(
    path,
    {},
    (_type: string, object: Record<string, unknown>) => {
      const metadata = object['metadata'] as { resourceVersion?: string } | undefined;
      seen.push({ resourceVersion: Number(metadata?.resourceVersion ?? 0), object });
    },
    () => undefined,
  );
  return { seen, stop: () => request.abort() };
}

/** A canary of `web` paused at `step` (an index into routedRolloutYaml's steps), not yet promoted to stable. */
export const pausedAt =
  (step: number) =>
  (s: LiveRolloutStatus): boolean =>
    s.phase === 'Paused' && s.currentStepIndex === step && s.currentPodHash !== s.stableRS;

/** routedRolloutYaml's weight at each of its pauses. */
const WEIGHT_AT_PAUSE = { 1: 20, 3: 50, 5: 100 } as const;

/**
 * In a new `namespace`: the stable/canary Services (unless `services` is false), the route `objects` (YAML),
 * then the routed Rollout `web` at web:1; resolves once that first revision is Healthy.
 */
export async function deployRoutedRollout(
  scene: TrafficScene,
  options: { namespace: string; trafficRouting: string; objects?: string; services?: boolean },
): Promise<void> {
  const { namespace } = options;
  await scene.createNamespace(namespace);
  if (options.services !== false) await scene.apply(`${namespace}-services.yaml`, servicesYaml(namespace));
  if (options.objects !== undefined) await scene.apply(`${namespace}-routes.yaml`, options.objects);
  await scene.apply(
    `${namespace}-rollout.yaml`,
    routedRolloutYaml({
      namespace,
      image: 'web:1',
      trafficRouting: options.trafficRouting,
      ...(options.services === false ? { services: false } : {}),
    }),
  );
  await scene.waitFor('the first revision healthy', namespace, 'web', (s) => s.phase === 'Healthy');
}

/** A new revision of `web`, as a user starts one: `kubectl patch` of its image. */
export async function setImage(scene: TrafficScene, namespace: string, image: string): Promise<void> {
  await scene.kubectl(
    'patch',
    'rollouts.rollgate.dev',
    'web',
    '-n',
    namespace,
    '--type=json',
    '-p',
    `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"${image}"}]`,
  );
}

/** A router's routes as the test reads them back, and what they should read at a canary weight. */
export interface RouteReadBack<T> {
  read(): Promise<T>;
  /** The expected read-back when the canary has `weight` % (0: everything on stable). */
  at(weight: number): T;
}

/**
 * Starts revision `image` and walks it 20 → 50 → 100, checking the routes at each pause and back at 0 once it
 * is the new stable. Returns the status at the 20 % pause and the final one.
 */
export async function walkToNewStable<T>(
  scene: TrafficScene,
  namespace: string,
  image: string,
  routes: RouteReadBack<T>,
  /** More checks at each pause, before it is promoted. */
  atPause?: (weight: number, status: LiveRolloutStatus) => Promise<void>,
): Promise<{ at20: LiveRolloutStatus; done: LiveRolloutStatus }> {
  const key = { namespace, name: 'web' };
  await setImage(scene, namespace, image);
  let at20: LiveRolloutStatus | undefined;
  for (const [step, weight] of Object.entries(WEIGHT_AT_PAUSE)) {
    const paused = await scene.waitFor(
      `the pause after setWeight ${weight}`,
      namespace,
      'web',
      pausedAt(+step),
    );
    at20 ??= paused;
    expect(await routes.read()).toEqual(routes.at(weight));
    await atPause?.(weight, paused);
    await promoteRollout(scene.clients, key);
  }
  const done = await scene.waitFor(
    'the new revision healthy',
    namespace,
    'web',
    (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
  );
  await expect.poll(() => routes.read(), { timeout: 10_000 }).toEqual(routes.at(0));
  return { at20: at20!, done };
}

/**
 * Starts revision `image`, lets it reach the pause at `fromStep` (1: 20 %, 3: 50 %), aborts it, and checks
 * what matters to users of the route: it reads back 100 % stable, and the write that routed the canary to 0
 * reached the API server before the canary ReplicaSet went below `scaledDownBelow` replicas.
 */
export async function abortRoutesBackFirst<T>(
  scene: TrafficScene,
  namespace: string,
  options: {
    image: string;
    fromStep: 1 | 3;
    routes: RouteReadBack<T>;
    /** The route objects' collection path, for a watch. */
    routesPath: string;
    /** True for a route object (as watched) that sends nothing to the canary. */
    routedBack(object: Record<string, unknown>): boolean;
    scaledDownBelow: number;
  },
): Promise<void> {
  const key = { namespace, name: 'web' };
  await setImage(scene, namespace, options.image);
  if (options.fromStep === 3) {
    // One promote, once paused: a second one sent before the first is acted on would skip a step.
    await scene.waitFor('the pause after setWeight 20', namespace, 'web', pausedAt(1));
    await promoteRollout(scene.clients, key);
  }
  const paused = await scene.waitFor(
    `the pause after setWeight ${WEIGHT_AT_PAUSE[options.fromStep]}`,
    namespace,
    'web',
    pausedAt(options.fromStep),
  );
  expect(await options.routes.read()).toEqual(options.routes.at(WEIGHT_AT_PAUSE[options.fromStep]));
  const canaryHash = paused.currentPodHash!;
  const routes = await recordChanges(scene, options.routesPath);
  const sets = await recordChanges(scene, `/apis/apps/v1/namespaces/${namespace}/replicasets`);
  await abortRollout(scene.clients, key);
  await scene.waitFor('the abort carried out', namespace, 'web', (s) => s.phase === 'Degraded');
  await expect
    .poll(async () => (await scene.replicaSets(namespace)).find((rs) => rs.hash === canaryHash)?.replicas, {
      timeout: 15_000,
    })
    .toBe(0);
  routes.stop();
  sets.stop();
  expect(await options.routes.read()).toEqual(options.routes.at(0));
  const routedBack = routes.seen.find(({ object }) => options.routedBack(object));
  const scaledDown = sets.seen.find(({ object }) => {
    const rs = object as { metadata: { labels?: Record<string, string> }; spec: { replicas?: number } };
    return (
      rs.metadata.labels?.['rollouts-pod-template-hash'] === canaryHash &&
      (rs.spec.replicas ?? 0) < options.scaledDownBelow
    );
  });
  expect(routedBack).toBeDefined();
  expect(scaledDown).toBeDefined();
  expect(routedBack!.resourceVersion).toBeLessThan(scaledDown!.resourceVersion);
}

/**
 * With the route `remove`d, a new revision is held at step 0 (not paused) with `message` as its
 * trafficRouterError and one Warning Event saying the same; once `restore`d it goes on to the 20 % pause,
 * whose status is returned.
 */
export async function heldWhileRouteMissing(
  scene: TrafficScene,
  namespace: string,
  options: {
    remove(): Promise<void>;
    restore(): Promise<void>;
    message: string;
    /** More checks while it is held. */
    whileHeld?(): Promise<void>;
  },
): Promise<LiveRolloutStatus> {
  await options.remove();
  await setImage(scene, namespace, 'web:2');
  // The new revision's error: a pass of the old one (a resync, a delayed scale-down) may meet the missing
  // route first and record the error at the old revision's last step.
  const held = await scene.waitFor(
    'the router error recorded for the new revision',
    namespace,
    'web',
    (s) => s.trafficRouterError !== undefined && s.currentPodHash !== s.stableRS,
  );
  expect(held.trafficRouterError?.message).toBe(options.message);
  expect(held.currentStepIndex ?? 0).toBe(0);
  expect(held.phase).not.toBe('Paused');
  const events = await scene.clients.core.listNamespacedEvent({ namespace });
  expect(
    events.items.filter((e) => e.reason === 'TrafficRoutingError').map((e) => [e.type, e.message]),
  ).toEqual([['Warning', options.message]]);
  await options.whileHeld?.();
  await options.restore();
  const paused = await scene.waitFor(
    'the pause after setWeight 20 once the route is back',
    namespace,
    'web',
    pausedAt(1),
  );
  expect(paused.trafficRouterError).toBeUndefined();
  return paused;
}

/**
 * Deletes the Rollout `web` as a user does (`kubectl delete`, waiting until it and its ReplicaSets are gone)
 * and checks that its routes, the user's objects, are still there and read 100 % stable.
 */
export async function deletedRolloutLeavesStable<T>(
  scene: TrafficScene,
  namespace: string,
  routes: RouteReadBack<T>,
): Promise<void> {
  await scene.kubectl('delete', 'rollouts.rollgate.dev', 'web', '-n', namespace, '--wait=true');
  await expect.poll(() => scene.status(namespace, 'web'), { timeout: 10_000 }).toBeUndefined();
  await expect.poll(async () => (await scene.replicaSets(namespace)).length, { timeout: 15_000 }).toBe(0);
  expect(await routes.read()).toEqual(routes.at(0));
}
