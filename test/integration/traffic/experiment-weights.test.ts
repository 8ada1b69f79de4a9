// End to end, a weighted experiment step through each router that carries one (Istio, SMI, ALB): while the step's
// Experiment runs, the route read back from the sandbox sends the template's weight to the Service the Experiment
// created (selecting the template's pods by hash), out of the stable's share; once the step passes (or the rollout
// aborts) it is gone. Argo's own SMI and Istio weighted-experiment examples run as written.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, inject, it, type ExpectStatic } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { ROLLGATE_API_GROUP } from '../../../src/manifest/api-version.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import { abortRollout } from '../../../src/views/rollout-commands.ts';
import { pausedAt, servicesYaml, setImage, startTrafficScene, type TrafficScene } from './traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);
const examples = upstreamCorpus('argo-rollouts/examples', import.meta.filename);

let scene: TrafficScene;

/** A Rollout `web` as Argo's traffic-routing-experiment-step examples: setWeight 20, a weighted experiment, a pause. */
function rolloutYaml(namespace: string, trafficRouting: string): string {
  return `apiVersion: rollgate.dev/v1alpha1
kind: Rollout
metadata:
  name: web
  namespace: ${namespace}
spec:
  replicas: 2
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
          image: web:1
          ports:
            - name: http
              containerPort: 8080
              protocol: TCP
  strategy:
    canary:
      canaryService: web-canary
      stableService: web-stable
      scaleDownDelaySeconds: 1
      trafficRouting:
${trafficRouting
  .trim()
  .split('\n')
  .map((line) => `        ${line}`)
  .join('\n')}
      steps:
        - setWeight: 20
        - experiment:
            duration: 4s
            scaleDownDelaySeconds: 1
            templates:
              - name: exp
                specRef: canary
                weight: 10
        - pause: {}
`;
}

interface TemplateStatus {
  name: string;
  serviceName?: string;
  podTemplateHash?: string;
}

async function experimentsIn(namespace: string) {
  const list = toPlainObject<{
    items: Array<{
      metadata: { name: string };
      status?: { phase?: string; templateStatuses?: TemplateStatus[] };
    }>;
  }>(
    await scene.clients.custom.listNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace,
      plural: 'experiments',
    }),
  );
  return list.items;
}

async function serviceNames(namespace: string): Promise<string[]> {
  return (await scene.clients.core.listNamespacedService({ namespace })).items.map(
    (svc) => svc.metadata!.name!,
  );
}

/**
 * Deploys web:1 in `namespace`, starts web:2, and checks the route during the experiment step and after it.
 * The three routers run side by side (each in its namespace), so `expect` is the test's own.
 */
async function weightedExperimentRuns(
  expect: ExpectStatic,
  namespace: string,
  options: {
    routing: string;
    objects?: string;
    /** The route read back: weight by Service name. */
    read(): Promise<Record<string, number>>;
  },
): Promise<void> {
  await scene.createNamespace(namespace);
  await scene.apply(`${namespace}-services.yaml`, servicesYaml(namespace));
  if (options.objects !== undefined) await scene.apply(`${namespace}-routes.yaml`, options.objects);
  await scene.apply(`${namespace}-rollout.yaml`, rolloutYaml(namespace, options.routing));
  await scene.waitFor('the first revision healthy', namespace, 'web', (s) => s.phase === 'Healthy');
  await expect.poll(options.read, { timeout: 10_000 }).toEqual({ 'web-stable': 100, 'web-canary': 0 });

  await setImage(scene, namespace, 'web:2');
  // The Experiment runs (its template's pods available): the route carries the template's Service at 10.
  await expect
    .poll(async () => Object.keys(await options.read()).length, { timeout: 40_000, interval: 100 })
    .toBe(3);
  const route = await options.read();
  const [experiment] = await experimentsIn(namespace);
  const template = experiment?.status?.templateStatuses?.find((t) => t.name === 'exp');
  expect(experiment?.status?.phase).toBe('Running');
  expect(template?.serviceName).toBeDefined();
  expect(route).toEqual({ 'web-stable': 70, 'web-canary': 20, [template!.serviceName!]: 10 });
  // The Service is the Experiment's: it selects the template's own pods, by their hash.
  const service = await scene.clients.core.readNamespacedService({ namespace, name: template!.serviceName! });
  expect(service.spec?.selector?.['rollouts-pod-template-hash']).toBe(template?.podTemplateHash);
  expect(service.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Experiment', controller: true });
  const status = (await scene.status(namespace, 'web')) as {
    currentStepIndex?: number;
    canary?: {
      weights?: { stable: { weight: number }; additional?: Array<{ serviceName: string; weight: number }> };
    };
  };
  expect(status.currentStepIndex).toBe(1);
  expect(status.canary?.weights?.stable.weight).toBe(70);
  expect(status.canary?.weights?.additional).toMatchObject([
    { serviceName: template!.serviceName, weight: 10 },
  ]);

  // The Experiment succeeds after its duration: the step passes and the template leaves the route.
  await scene.waitFor('the pause after the experiment', namespace, 'web', pausedAt(2));
  await expect.poll(options.read, { timeout: 10_000 }).toEqual({ 'web-stable': 80, 'web-canary': 20 });
  // Its pods go after the step's scale-down delay, and its Service with them.
  await expect.poll(() => serviceNames(namespace), { timeout: 20_000 }).not.toContain(template!.serviceName);
}

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), [
    'split.smi-spec.io_trafficsplits.yaml',
    'networking.istio.io_virtualservices.yaml',
    'networking.istio.io_destinationrules.yaml',
  ]);
}, 90_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing).concurrent('weighted experiment steps under a whole Rollgate', () => {
  it('Istio: the VirtualService route gains a destination for the template, then loses it', async ({
    expect,
  }) => {
    const namespace = 'exp-istio';
    const virtualService = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: web
  namespace: ${namespace}
spec:
  hosts: [web]
  http:
    - name: primary
      route:
        - destination: {host: web-stable}
          weight: 100
        - destination: {host: web-canary}
          weight: 0
`;
    await weightedExperimentRuns(expect, namespace, {
      routing: 'istio:\n  virtualService:\n    name: web\n    routes: [primary]\n',
      objects: virtualService,
      async read() {
        const found = toPlainObject<{
          spec: { http: Array<{ route: Array<{ destination: { host: string }; weight?: number }> }> };
        }>(
          await scene.clients.custom.getNamespacedCustomObject({
            group: 'networking.istio.io',
            version: 'v1',
            namespace,
            plural: 'virtualservices',
            name: 'web',
          }),
        );
        return Object.fromEntries(found.spec.http[0]!.route.map((d) => [d.destination.host, d.weight ?? 0]));
      },
    });
  }, 90_000);

  it('SMI: the TrafficSplit gains a backend for the template, then loses it', async ({ expect }) => {
    const namespace = 'exp-smi';
    await weightedExperimentRuns(expect, namespace, {
      routing: 'smi:\n  rootService: web\n  trafficSplitName: web-split\n',
      async read() {
        const found = toPlainObject<{ spec: { backends: Array<{ service: string; weight: number }> } }>(
          await scene.clients.custom.getNamespacedCustomObject({
            group: 'split.smi-spec.io',
            version: 'v1alpha4',
            namespace,
            plural: 'trafficsplits',
            name: 'web-split',
          }),
        );
        return Object.fromEntries(found.spec.backends.map((b) => [b.service, b.weight]));
      },
    });
  }, 90_000);

  it("ALB: the Ingress's forward action gains a target group for the template, then loses it", async ({
    expect,
  }) => {
    const namespace = 'exp-alb';
    const ingress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ${namespace}
  annotations:
    kubernetes.io/ingress.class: alb
spec:
  rules:
    - http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: web-stable
                port:
                  name: use-annotation
`;
    await weightedExperimentRuns(expect, namespace, {
      routing: 'alb:\n  ingress: web\n  servicePort: 80\n',
      objects: ingress,
      async read() {
        const found = toPlainObject<{ metadata: { annotations?: Record<string, string> } }>(
          await scene.clients.custom.getNamespacedCustomObject({
            group: 'networking.k8s.io',
            version: 'v1',
            namespace,
            plural: 'ingresses',
            name: 'web',
          }),
        );
        const action = found.metadata.annotations?.['alb.ingress.kubernetes.io/actions.web-stable'];
        if (action === undefined) return {};
        const parsed = JSON.parse(action) as {
          ForwardConfig: { TargetGroups: Array<{ ServiceName: string; Weight: number }> };
        };
        return Object.fromEntries(parsed.ForwardConfig.TargetGroups.map((g) => [g.ServiceName, g.Weight]));
      },
    });
  }, 90_000);

  it('SMI, aborted during the experiment step: the template leaves the split with the canary, all to stable', async ({
    expect,
  }) => {
    const namespace = 'exp-smi-abort';
    const read = async () => {
      const found = toPlainObject<{ spec: { backends: Array<{ service: string; weight: number }> } }>(
        await scene.clients.custom.getNamespacedCustomObject({
          group: 'split.smi-spec.io',
          version: 'v1alpha4',
          namespace,
          plural: 'trafficsplits',
          name: 'web',
        }),
      );
      return Object.fromEntries(found.spec.backends.map((b) => [b.service, b.weight]));
    };
    await scene.createNamespace(namespace);
    await scene.apply(`${namespace}-services.yaml`, servicesYaml(namespace));
    // A long experiment: only the abort ends the step.
    await scene.apply(
      `${namespace}-rollout.yaml`,
      rolloutYaml(namespace, 'smi: {}\n').replace('duration: 4s', 'duration: 1h'),
    );
    await scene.waitFor('the first revision healthy', namespace, 'web', (s) => s.phase === 'Healthy');
    await setImage(scene, namespace, 'web:2');
    await expect
      .poll(async () => Object.keys(await read()).length, { timeout: 40_000, interval: 100 })
      .toBe(3);
    await abortRollout(scene.clients, { namespace, name: 'web' });
    await scene.waitFor('the abort carried out', namespace, 'web', (s) => s.phase === 'Degraded');
    await expect.poll(read, { timeout: 10_000 }).toEqual({ 'web-stable': 100, 'web-canary': 0 });
    // The abort stopped the Experiment too: it ends (terminated: its templates Successful).
    await expect
      .poll(async () => (await experimentsIn(namespace))[0]?.status?.phase, { timeout: 10_000 })
      .toBeOneOf(['Successful', 'Failed', 'Error', 'Inconclusive']);
  }, 90_000);

  // Argo's own examples, applied as written (the Rollout as Rollgate's kind, in a namespace of its own). Their
  // experiments have no duration: the step holds the template's share until the rollout is aborted.
  it.skipIf(examples.missing).for([
    {
      file: 'rollout-smi-experiment-step.yaml',
      rollout: 'rollout-smi-experiment',
      route: { group: 'split.smi-spec.io', version: 'v1alpha4', plural: 'trafficsplits' },
      routeName: 'rollout-smi-experiment-trafficsplit',
      services: { canary: 'rollout-smi-experiment-canary', stable: 'rollout-smi-experiment-stable' },
      weights: { canary: 5, template: 5 },
    },
    {
      file: 'istio-host-split-experiment-step.yaml',
      rollout: 'istio-host-split',
      route: { group: 'networking.istio.io', version: 'v1alpha3', plural: 'virtualservices' },
      routeName: 'istio-host-split-vsvc',
      services: { canary: 'istio-host-split-canary', stable: 'istio-host-split-stable' },
      weights: { canary: 10, template: 20 },
    },
  ])(
    "Argo's $file runs as written: the template's share while the step holds, all to stable on abort",
    async (example, { expect }) => {
      const namespace = `argo-${example.rollout}`.slice(0, 60);
      const read = async (): Promise<Record<string, number>> => {
        const found = toPlainObject<{
          spec: {
            backends?: Array<{ service: string; weight: number }>;
            http?: Array<{ route: Array<{ destination: { host: string }; weight?: number }> }>;
          };
        }>(
          await scene.clients.custom.getNamespacedCustomObject({
            ...example.route,
            namespace,
            name: example.routeName,
          }),
        );
        const pairs =
          found.spec.backends?.map((b): [string, number] => [b.service, b.weight]) ??
          found.spec.http![0]!.route.map((d): [string, number] => [d.destination.host, d.weight ?? 0]);
        return Object.fromEntries(pairs);
      };
      await scene.createNamespace(namespace);
      const text = readFileSync(
        join(examples.folder, 'traffic-routing-experiment-step', example.file),
        'utf8',
      );
      const asRollgate = text.replace(
        'apiVersion: argoproj.io/v1alpha1',
        'apiVersion: rollgate.dev/v1alpha1',
      );
      expect(asRollgate).not.toContain('argoproj.io/v1alpha1');
      const written = join(scene.tmp.path, `${namespace}.yaml`);
      writeFileSync(written, asRollgate);
      await scene.kubectl('apply', '-n', namespace, '-f', written);
      await scene.waitFor('the example healthy', namespace, example.rollout, (st) => st.phase === 'Healthy');
      await scene.kubectl(
        'patch',
        'rollouts.rollgate.dev',
        example.rollout,
        '-n',
        namespace,
        '--type=json',
        '-p',
        '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"argoproj/rollouts-demo:yellow"}]',
      );
      await expect
        .poll(async () => Object.keys(await read()).length, { timeout: 40_000, interval: 100 })
        .toBe(3);
      const [experiment] = await experimentsIn(namespace);
      const service = experiment?.status?.templateStatuses?.[0]?.serviceName;
      expect(await read()).toEqual({
        [example.services.stable]: 100 - example.weights.canary - example.weights.template,
        [example.services.canary]: example.weights.canary,
        [service!]: example.weights.template,
      });
      await abortRollout(scene.clients, { namespace, name: example.rollout });
      await expect
        .poll(read, { timeout: 15_000 })
        .toEqual({ [example.services.stable]: 100, [example.services.canary]: 0 });
    },
  );
});
