// Sandbox API server throughput: writes and reads through client-node, controller settling, watch latency.
import { AppsV1Api, CoreV1Api, Watch } from '@kubernetes/client-node';
import { ManualClock } from '../src/clock/clock.ts';
import { startSandbox } from '../src/sandbox/index.ts';
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
  return results;
}
