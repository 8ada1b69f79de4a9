// Sandbox API server throughput: writes and reads through client-node, controller settling, watch latency.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { ManualClock } from '../src/clock/clock.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import type { ResourceType } from '../src/sandbox/resources/resource-type.ts';
import type { StoredObject } from '../src/sandbox/store/object-store.ts';
import { compileCrdSchema } from '../src/sandbox/validation/crd-schema.ts';
import { admitCustomResource } from '../src/sandbox/validation/custom-resource-admission.ts';
import type { BenchResult } from './run.ts';
import { median } from './stats.ts';

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const clock = new ManualClock();
  const sandbox = await startSandbox({ clock, readyDelayMs: 1000 });
  try {
    const core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
    const apps = sandbox.kubeConfig.makeApiClient(AppsV1Api);

    const writes = 500;
    let start = performance.now();
    for (let i = 0; i < writes; i++) {
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: `cm-${i}` }, data: { i: String(i) } },
      });
    }
    let seconds = (performance.now() - start) / 1000;
    results.push({
      name: 'sandbox: sequential creates (client-node)',
      value: writes / seconds,
      unit: 'req/s',
      goal: '> 300 req/s',
    });

    start = performance.now();
    for (let i = 0; i < writes; i++) {
      await core.patchNamespacedConfigMap({
        name: `cm-${i}`,
        namespace: 'default',
        body: [{ op: 'replace', path: '/data/i', value: `x${i}` }],
      });
    }
    seconds = (performance.now() - start) / 1000;
    results.push({
      name: 'sandbox: sequential JSON patches',
      value: writes / seconds,
      unit: 'req/s',
      goal: '> 300 req/s',
    });

    start = performance.now();
    const reads = 100;
    for (let i = 0; i < reads; i++)
      await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'absent=1' });
    seconds = (performance.now() - start) / 1000;
    results.push({
      name: `sandbox: list of ${writes} configmaps with a selector`,
      value: reads / seconds,
      unit: 'req/s',
    });

    const replicaSets = 20;
    start = performance.now();
    for (let i = 0; i < replicaSets; i++) {
      await apps.createNamespacedReplicaSet({
        namespace: 'default',
        body: {
          metadata: { name: `rs-${i}` },
          spec: {
            replicas: 5,
            selector: { matchLabels: { app: `rs-${i}` } },
            template: {
              metadata: { labels: { app: `rs-${i}` } },
              spec: { containers: [{ name: 'a', image: 'nginx:1.27' }] },
            },
          },
        },
      });
    }
    await sandbox.advance(2000);
    seconds = (performance.now() - start) / 1000;
    results.push({
      name: `sandbox: ${replicaSets} ReplicaSets × 5 pods created and Ready (advance 2s)`,
      value: seconds * 1000,
      unit: 'ms',
      goal: '< 3000 ms',
    });

    const watch = new Watch(sandbox.kubeConfig);
    const latencies: number[] = [];
    let sentAt = 0;
    let seen: (() => void) | undefined;
    const controller = await watch.watch(
      '/api/v1/namespaces/default/configmaps',
      { fieldSelector: 'metadata.name=watched' },
      () => {
        latencies.push(performance.now() - sentAt);
        seen?.();
      },
      () => undefined,
    );
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'watched' }, data: { v: '0' } },
    });
    for (let i = 1; i <= 50; i++) {
      const arrived = new Promise<void>((resolve) => (seen = resolve));
      sentAt = performance.now();
      await core.patchNamespacedConfigMap({
        name: 'watched',
        namespace: 'default',
        body: [{ op: 'replace', path: '/data/v', value: String(i) }],
      });
      await arrived;
    }
    controller.abort();
    results.push({
      name: 'sandbox: write → watch event (p50)',
      value: median(latencies.slice(1)),
      unit: 'ms',
      notes: 'includes the write round trip',
    });
  } finally {
    await sandbox.stop();
  }
  results.push(...(await customResourceSchemaCost()));
  return results;
}

/** Gateway API's HTTPRoute CRD, read in place from the shared corpus (the largest schema a router meets). */
const HTTPROUTE_CRD = join(
  import.meta.dirname,
  '../../shared/corpus/crds/gateway.networking.k8s.io_httproutes.yaml',
);

function httpRoute(name: string): StoredObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name },
    spec: {
      parentRefs: [{ name: 'gateway' }],
      rules: [
        {
          matches: [
            { path: { type: 'PathPrefix', value: '/' }, headers: [{ name: 'x-canary', value: 'yes' }] },
          ],
          backendRefs: [
            { name: 'web-stable', port: 80, weight: 80 },
            { name: 'web-canary', port: 80, weight: 20 },
          ],
        },
      ],
    },
  } as StoredObject;
}

/** Gateway API's HTTPRoute CRD; `loose` moves it to a group of its own with a schema that checks nothing. */
function httpRouteCrd(loose: boolean): { metadata: { name: string }; spec: Record<string, unknown> } {
  // A clone alone has no corpus beside it: say what is missing rather than a bare ENOENT.
  if (!existsSync(HTTPROUTE_CRD))
    throw new Error(
      `the schema admission measures need ${HTTPROUTE_CRD} (the upstream corpus beside the repository): see README.md "The upstream corpus"`,
    );
  const crd = parseYaml(readFileSync(HTTPROUTE_CRD, 'utf8')) as {
    metadata: { name: string };
    spec: { group: string; versions: Array<{ name: string; schema: { openAPIV3Schema: unknown } }> };
  };
  if (!loose) return crd;
  const group = 'loose.gateway.networking.k8s.io';
  return {
    ...crd,
    metadata: { name: `httproutes.${group}` },
    spec: {
      ...crd.spec,
      group,
      versions: crd.spec.versions.map((v) => ({
        ...v,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
    },
  };
}

/** Sequential JSON patches of HTTPRoutes (weights), in req/s, against a fresh sandbox holding only them. */
async function httpRoutePatchRate(kubeConfig: KubeConfig, group: string, count: number): Promise<number> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const routes = { group, version: 'v1', namespace: 'default', plural: 'httproutes' };
  for (let i = 0; i < count; i++) {
    const body = { ...httpRoute(`route-${i}`), apiVersion: `${group}/v1` };
    await custom.createNamespacedCustomObject({ ...routes, body });
  }
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    await custom.patchNamespacedCustomObject(
      {
        ...routes,
        name: `route-${i}`,
        body: [{ op: 'replace', path: '/spec/rules/0/backendRefs/1/weight', value: 50 }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
  }
  return count / ((performance.now() - start) / 1000);
}

/** What schema admission (prune, default, validate) costs: in process, and per HTTP patch of an HTTPRoute. */
async function customResourceSchemaCost(): Promise<BenchResult[]> {
  const crd = httpRouteCrd(false) as unknown as {
    spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: unknown } }> };
  };
  const raw = crd.spec.versions.find((v) => v.name === 'v1')?.schema.openAPIV3Schema;
  const compiles = 20;
  let start = performance.now();
  for (let i = 0; i < compiles; i++) compileCrdSchema(raw);
  const compileMs = (performance.now() - start) / compiles;
  const schema = compileCrdSchema(raw);
  const type = {
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    kind: 'HTTPRoute',
    plural: 'httproutes',
    statusSubresource: true,
  } as ResourceType;
  const admissions = 5000;
  start = performance.now();
  for (let i = 0; i < admissions; i++) {
    admitCustomResource(type, schema, httpRoute('r'), { fieldValidation: 'Strict' });
  }
  const admitUs = ((performance.now() - start) * 1000) / admissions;

  const sandbox = await startSandbox({ clock: new ManualClock() });
  try {
    const extensions = sandbox.kubeConfig.makeApiClient(ApiextensionsV1Api);
    for (const loose of [false, true]) {
      const body = httpRouteCrd(loose);
      await extensions.patchCustomResourceDefinition(
        { name: body.metadata.name, body, fieldManager: 'bench', force: true },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      );
    }
    const count = 300;
    const checked = await httpRoutePatchRate(sandbox.kubeConfig, 'gateway.networking.k8s.io', count);
    const unchecked = await httpRoutePatchRate(sandbox.kubeConfig, 'loose.gateway.networking.k8s.io', count);
    return [
      {
        name: 'sandbox: HTTPRoute v1 schema compiled (on CRD apply)',
        value: compileMs,
        unit: 'ms',
        notes: 'gateway.networking.k8s.io_httproutes.yaml, 429 KB',
      },
      {
        name: 'sandbox: HTTPRoute admission (prune, default, validate)',
        value: admitUs,
        unit: 'µs',
        notes: 'in process, one rule, two backendRefs',
      },
      {
        name: 'sandbox: sequential HTTPRoute JSON patches (schema checked)',
        value: checked,
        unit: 'req/s',
        goal: '> 300 req/s',
      },
      {
        name: 'sandbox: sequential HTTPRoute JSON patches (schema-less copy)',
        value: unchecked,
        unit: 'req/s',
        notes: 'same CRD, preserve-unknown-fields: the cost of checking is the difference',
      },
    ];
  } finally {
    await sandbox.stop();
  }
}
