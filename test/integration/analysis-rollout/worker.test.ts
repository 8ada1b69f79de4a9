// The running system: Git → sync → reconcile worker measures a web metric (token from a Secret) → promote or abort.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import { eventually } from '../../support/eventually.ts';
import { rolloutYaml, startPipeline, type Pipeline } from '../pipeline/pipeline-harness.ts';

const TOKEN = 't0ken-from-secret';

const templateYaml = (url: string): string => `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: health-rate
spec:
  args:
    - name: token
      valueFrom:
        secretKeyRef: { name: health-api, key: token }
  metrics:
    - name: rate
      count: 1
      successCondition: result >= 0.95
      failureCondition: result < 0.5
      provider:
        web:
          url: ${url}
          headers: [{ key: Authorization, value: 'Bearer {{args.token}}' }]
          jsonPath: '{$.rate}'
`;

const steps = `        - setWeight: 50
        - analysis:
            templates: [{ templateName: health-rate }]
`;

describe('the reconcile worker measures AnalysisRuns', () => {
  let pipeline: Pipeline;
  let process: RunningProcess;
  let server: Server;
  let rate = 0.99;
  let firstStable: string | undefined;
  const authorizations: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      authorizations.push(String(req.headers.authorization));
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ rate }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/health`;
    pipeline = await startPipeline(inject('redisUrl'));
    await pipeline.clients.core.createNamespacedSecret({
      namespace: 'default',
      body: {
        metadata: { name: 'health-api', labels: { 'rollgate.dev/analysis-secret': 'true' } },
        data: { token: Buffer.from(TOKEN).toString('base64') },
      },
    });
    pipeline.work.write({
      'apps/health-rate.yaml': templateYaml(url),
      'apps/web.yaml': rolloutYaml({ image: 'web:1.0', steps }),
    });
    pipeline.work.commit('first');
    await pipeline.work.push(pipeline.repoUrl);
    process = await pipeline.start();
    const first = await eventually('the first revision to be Healthy', async () => {
      const r = await pipeline.rollout('web');
      return r?.status?.phase === 'Healthy' ? r : undefined;
    });
    firstStable = first.status?.stableRS;
  }, 60_000);
  afterAll(async () => {
    await pipeline?.stop();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  async function push(image: string): Promise<void> {
    pipeline.work.write({ 'apps/web.yaml': rolloutYaml({ image, steps }) });
    pipeline.work.commit(image);
    await pipeline.work.push(pipeline.repoUrl);
    expect((await pipeline.pushWebhook(process)).status).toBe(202);
  }

  async function runs(): Promise<Array<{ metadata: { name: string }; status?: { phase?: string } }>> {
    const list = (await pipeline.clients.custom.listNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'analysisruns',
    })) as { items: Array<{ metadata: { name: string }; status?: { phase?: string } }> };
    return list.items;
  }

  it('promotes a canary whose analysis step measures a good rate', async () => {
    rate = 0.99;
    await push('web:2.0');
    const healthy = await eventually('web:2.0 to be promoted', async () => {
      const r = await pipeline.rollout('web');
      const status = r?.status;
      return status?.phase === 'Healthy' &&
        status.stableRS !== firstStable &&
        status.stableRS === status.currentPodHash
        ? r
        : undefined;
    });
    expect(healthy.spec?.template?.spec?.containers?.[0]?.image).toBe('web:2.0');
    const all = await runs();
    expect(all.map((r) => r.status?.phase)).toEqual(['Successful']);
    // The token came from the Secret, and only the measurement's request carried it.
    expect(authorizations).toContain(`Bearer ${TOKEN}`);
    expect(JSON.stringify(all)).not.toContain(TOKEN);
  });

  it('aborts a canary whose analysis step measures a bad rate', async () => {
    rate = 0.1;
    const before = (await pipeline.rollout('web'))?.status?.stableRS;
    await push('web:3.0');
    const degraded = await eventually('web:3.0 to be aborted', async () => {
      const r = await pipeline.rollout('web');
      return r?.status?.phase === 'Degraded' && r.status.currentPodHash !== before ? r : undefined;
    });
    expect(degraded.status?.stableRS).toBe(before);
    expect((await runs()).map((r) => r.status?.phase).sort()).toEqual(['Failed', 'Successful']);
  });
});
