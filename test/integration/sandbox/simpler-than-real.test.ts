// Where the sandbox is simpler than kube-apiserver 1.20 on purpose (docs/sandbox.md, "Real API server"):
// these tests pin each difference, so a change to it is a decision, not an accident.
import { KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ readyDelayMs: 50 });
});
afterAll(async () => {
  await sandbox.stop();
});

describe('the sandbox, simpler than kube-apiserver 1.20', () => {
  it('server-side applies a Service whose port omits protocol (1.20 answers 500 every time; refuseWrites injects that)', async () => {
    const objects = KubernetesObjectApi.makeApiClient(sandbox.kubeConfig);
    const applied = await objects.patch(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'no-protocol', namespace: 'default' },
        spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      },
      undefined,
      undefined,
      'rollgate',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect((applied as { spec?: { ports?: Array<{ protocol?: string }> } }).spec?.ports?.[0]?.protocol).toBe(
      'TCP',
    );
  });
});
