// `rollgate install --controller-groups argoproj.io`: Rollgate's CRDs as always, Argo's only where absent, an existing
// Argo CRD left exactly as it was (same resourceVersion), and a repeat that writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { runCli } from '../../support/run-cli.ts';

/** Argo's Rollout CRD as a cluster that ran Argo Rollouts holds it (its schema abridged, its labels Argo's). */
const ARGO_ROLLOUT_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: {
    name: 'rollouts.argoproj.io',
    labels: { 'app.kubernetes.io/part-of': 'argo-rollouts' },
  },
  spec: {
    group: 'argoproj.io',
    names: { kind: 'Rollout', listKind: 'RolloutList', plural: 'rollouts', singular: 'rollout' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        },
      },
    ],
  },
};

let sandbox: Sandbox;
let clients: KubeClients;
let kubeconfig: string;

async function readCrd(name: string): Promise<Record<string, unknown> | undefined> {
  try {
    return (await clients.custom.getClusterCustomObject({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      plural: 'customresourcedefinitions',
      name,
    })) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  sandbox = await startSandbox();
  kubeconfig = join(mkdtempSync(join(tmpdir(), 'rollgate-install-groups-')), 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  clients = createKubeClients(sandbox.kubeConfig);
  await clients.custom.createClusterCustomObject({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    body: ARGO_ROLLOUT_CRD,
  });
});

afterAll(async () => {
  await sandbox?.stop();
});

describe('rollgate install --controller-groups', () => {
  it("installs Rollgate's CRDs and Argo's absent ones, and leaves Argo's installed Rollout CRD as it was", async () => {
    const before = await readCrd('rollouts.argoproj.io');
    const first = await runCli('install', '--controller-groups', 'argoproj.io', '--kubeconfig', kubeconfig);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout.trim().split('\n')).toEqual([
      'customresourcedefinition/rollouts.rollgate.dev created',
      'customresourcedefinition/analysistemplates.rollgate.dev created',
      'customresourcedefinition/clusteranalysistemplates.rollgate.dev created',
      'customresourcedefinition/analysisruns.rollgate.dev created',
      'customresourcedefinition/experiments.rollgate.dev created',
      'customresourcedefinition/gitsources.rollgate.dev created',
      'customresourcedefinition/fleets.rollgate.dev created',
      "customresourcedefinition/rollouts.argoproj.io unchanged (present: Argo's own, left as it is)",
      'customresourcedefinition/analysistemplates.argoproj.io created',
      'customresourcedefinition/clusteranalysistemplates.argoproj.io created',
      'customresourcedefinition/analysisruns.argoproj.io created',
      'customresourcedefinition/experiments.argoproj.io created',
    ]);
    // Byte for byte: same JSON, same resourceVersion (nothing was written to it).
    expect(JSON.stringify(await readCrd('rollouts.argoproj.io'))).toBe(JSON.stringify(before));
    expect((await readCrd('analysisruns.argoproj.io'))?.spec).toMatchObject({ group: 'argoproj.io' });

    // Again: nothing to write, the created argoproj.io CRDs now left as they are too.
    const again = await runCli(
      'install',
      '--controller-groups',
      'rollgate.dev,argoproj.io',
      '--kubeconfig',
      kubeconfig,
    );
    expect(again.code).toBe(0);
    expect(
      again.stdout
        .trim()
        .split('\n')
        .every((line) => line.includes(' unchanged')),
    ).toBe(true);

    // Without the flag (the default, rollgate.dev): Argo's CRDs are not looked at.
    const plain = await runCli('install', '--kubeconfig', kubeconfig);
    expect(plain.stdout).not.toContain('argoproj.io');
  });

  it('refuses a group it does not drive, naming the flag', async () => {
    const bad = await runCli('install', '--controller-groups', 'argo', '--kubeconfig', kubeconfig);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'rollgate install: --controller-groups: must be a comma-separated list of rollgate.dev, argoproj.io, got "argo"\n',
    );
  });
});
