// Issue 26, Critical 2: an AnalysisTemplate's secretKeyRef reads only Secrets that opt in, so a Secret cannot leave through a metric.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAnalysisRun } from '../../../src/analysis/build-analysis-run.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { createWebProvider } from '../../../src/analysis/providers/web-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { MERGE_PATCH } from '../../../src/kube/client.ts';
import { ANALYSIS_SECRET_LABEL, createKubeSecretResolver } from '../../../src/reconciler/secret-resolver.ts';
import type { AnalysisTemplate } from '../../../src/manifest/analysis.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { ReconcileHarness } from '../reconcile/reconcile-harness.ts';

const TOKEN = 'kube-system-Token-4f9a2c';

describe('analysis secretKeyRef scope', () => {
  let harness: ReconcileHarness;
  let listener: Server;
  let url: string;
  const received: string[] = [];

  beforeAll(async () => {
    harness = await ReconcileHarness.start({ seed: 26 });
    listener = createServer((req, res) => {
      received.push(`${req.url ?? ''} ${req.headers.authorization ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const address = listener.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/collect`;
    // A Secret Rollgate was never meant to hand out, in the namespace the attacker's run lives in.
    await harness.clients.core.createNamespacedSecret({
      namespace: 'kube-system',
      body: { metadata: { name: 'cluster-token' }, data: { token: Buffer.from(TOKEN).toString('base64') } },
    });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    await harness.stop();
  });

  const template = (): AnalysisTemplate =>
    ({
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'AnalysisTemplate',
      metadata: { name: 'exfiltrate', namespace: 'kube-system' },
      spec: {
        args: [{ name: 'token', valueFrom: { secretKeyRef: { name: 'cluster-token', key: 'token' } } }],
        metrics: [
          {
            name: 'send',
            successCondition: 'result.ok == 1',
            provider: {
              web: { url, headers: [{ key: 'Authorization', value: 'Bearer {{args.token}}' }] },
            },
          },
        ],
      },
    }) as AnalysisTemplate;

  const measure = async () => {
    const run = buildAnalysisRun([template()], [], { name: 'run-1', namespace: 'kube-system' });
    const outcome = await reconcileAnalysisRun(
      { ...run, metadata: { ...run.metadata, uid: 'u1' } },
      {
        providers: createMetricProviderRegistry([createWebProvider()]),
        resolveSecret: createKubeSecretResolver(harness.clients),
        now: harness.clock.now(),
      },
    );
    return outcome.status.metricResults?.[0]?.measurements?.[0];
  };

  it('refuses a Secret without the opt-in label: an Error measurement naming the label, nothing sent, no value shown', async () => {
    const measurement = await measure();
    expect(received).toEqual([]);
    expect(measurement?.phase).toBe('Error');
    expect(measurement?.message).toContain('kube-system/cluster-token');
    expect(measurement?.message).toContain(`${ANALYSIS_SECRET_LABEL}: "true"`);
    expect(JSON.stringify(measurement)).not.toContain(TOKEN);
  });

  it('reads it once the Secret opts in, for the request only', async () => {
    await harness.clients.core.patchNamespacedSecret(
      {
        namespace: 'kube-system',
        name: 'cluster-token',
        body: { metadata: { labels: { [ANALYSIS_SECRET_LABEL]: 'true' } } },
      },
      MERGE_PATCH,
    );
    const measurement = await measure();
    expect(measurement?.phase).toBe('Successful');
    expect(received).toEqual([`/collect Bearer ${TOKEN}`]);
  });

  it('refuses a name that is not a Secret name before asking the API server', async () => {
    await expect(
      createKubeSecretResolver(harness.clients)('kube-system', '../secrets/cluster-token', 'token'),
    ).rejects.toMatchObject({ code: 'kube.secret_not_allowed' });
  });
});
