// Benchmark: what measuring AnalysisRuns adds to a reconcile job (sandbox API, fake provider), idle and with a running run.
import { createMetricProviderRegistry } from '../src/analysis/providers/metric-provider.ts';
import { ManualClock } from '../src/clock/clock.ts';
import { reconcileAnalysisRuns } from '../src/reconciler/analysis-run-reconciler.ts';
import { createKubeClients } from '../src/kube/client.ts';
import { installCrds } from '../src/kube/install-crds.ts';
import { silentLogger } from '../src/log/logger.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from '../src/manifest/api-version.ts';
import { rollgateCrds } from '../src/manifest/crds.ts';
import type { BenchResult } from './run.ts';
import { median } from './stats.ts';

const CALLS = 200;
const group = { group: ROLLGATE_API_GROUP, version: 'v1alpha1', namespace: 'default' };

export async function run(): Promise<BenchResult[]> {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const sandbox = await startSandbox({ clock });
  try {
    const clients = createKubeClients(sandbox.kubeConfig);
    await installCrds(clients, rollgateCrds());
    const rollout = (await clients.custom.createNamespacedCustomObject({
      ...group,
      plural: 'rollouts',
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'Rollout',
        metadata: { name: 'bench' },
        spec: {
          selector: { matchLabels: { app: 'bench' } },
          template: {
            metadata: { labels: { app: 'bench' } },
            spec: { containers: [{ name: 'a', image: 'a' }] },
          },
          strategy: { canary: { steps: [] } },
        },
      },
    })) as { metadata: { uid: string } };
    let measured = 0;
    const deps = {
      clients,
      clock,
      logger: silentLogger,
      providers: createMetricProviderRegistry([
        {
          type: 'web',
          measure: () => {
            measured += 1;
            return Promise.resolve({ value: 1, raw: '1' });
          },
        },
      ]),
    };
    const time = async (each: () => Promise<void>): Promise<number[]> => {
      const samples: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        const started = performance.now();
        await reconcileAnalysisRuns({ namespace: 'default', name: 'bench' }, deps);
        samples.push(performance.now() - started);
        await each();
      }
      return samples;
    };
    const idle = await time(async () => undefined);
    await clients.custom.createNamespacedCustomObject({
      ...group,
      plural: 'analysisruns',
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'AnalysisRun',
        metadata: {
          name: 'bench-run',
          labels: { 'rollgate.dev/rollout': 'bench' },
          ownerReferences: [
            { apiVersion: ROLLGATE_API_VERSION, kind: 'Rollout', name: 'bench', uid: rollout.metadata.uid },
          ],
        },
        spec: {
          metrics: [
            {
              name: 'm',
              interval: '1s',
              successCondition: 'result == 1',
              provider: { web: { url: 'http://127.0.0.1:1/' } },
            },
          ],
        },
      },
    });
    // Each call is due (the clock moves one interval), so each one measures and writes status.
    const busy = await time(async () => {
      clock.advance(1_000);
    });
    return [
      {
        name: 'analysis reconcile, rollout without runs (median)',
        value: Number(median(idle).toFixed(2)),
        unit: 'ms',
        notes: `${CALLS} calls against the sandbox: get Rollout + list runs`,
      },
      {
        name: 'analysis reconcile, one run measured and written (median)',
        value: Number(median(busy).toFixed(2)),
        unit: 'ms',
        notes: `${CALLS} calls, ${measured} measurements with an instant fake provider; status history capped by measurementRetention`,
      },
    ];
  } finally {
    await sandbox.stop();
  }
}
