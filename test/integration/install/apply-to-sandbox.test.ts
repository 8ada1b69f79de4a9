// The rendered install applied to the sandbox API server with the real kubectl
// (`apply --server-side --dry-run=server`): every object is of a kind the sandbox serves (RBAC kinds
// included) and the whole install is accepted.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { INSTALLS, renderInstall, type InstallName, type RenderedObject } from './rendered-install.ts';

interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

let sandbox: Sandbox;
let dir: string;
let kubeconfig: string;

/** kubectl, asynchronously: the sandbox answers from this process's event loop. */
function kubectl(args: string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
      { timeout: 30_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

const applyDryRun = (objects: RenderedObject[], ...flags: string[]): Promise<KubectlResult> =>
  kubectl(
    ['apply', '--server-side', '--dry-run=server', ...flags, '-f', '-'],
    objects.map((o) => stringify(o)).join('---\n'),
  );

/** `apiVersion kind` of everything the sandbox serves, from its discovery as kubectl reads it. */
async function servedKinds(): Promise<Set<string>> {
  const { stdout, code, stderr } = await kubectl(['api-resources', '--no-headers']);
  expect(code, stderr).toBe(0);
  return new Set(
    stdout
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .map((columns) => `${columns.at(-3)} ${columns.at(-1)}`),
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-install-apply-'));
  kubeconfig = join(dir, 'sandbox.kubeconfig');
  sandbox = await startSandbox({});
  await sandbox.writeKubeconfig(kubeconfig);
  // A dry run creates nothing, so the namespaced objects need their namespace to exist already, as on a
  // real API server (which answers 404 for objects in a missing namespace).
  const created = await kubectl(['create', 'namespace', 'rollgate-system']);
  expect(created.code, created.stderr).toBe(0);
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(Object.keys(INSTALLS) as InstallName[])('kubectl apply -k %s (server dry run)', (install) => {
  it('is accepted whole: every kind it holds is served, RBAC included', async () => {
    const objects = await renderInstall(install);
    const served = await servedKinds();
    expect(objects.filter((o) => !served.has(`${o.apiVersion} ${o.kind}`)).map((o) => o.kind)).toEqual([]);

    const result = await applyDryRun(objects);
    expect(result.code, result.stderr).toBe(0);
    const applied = result.stdout
      .split('\n')
      .filter((line) => line.endsWith('serverside-applied (server dry run)'));
    expect(applied).toHaveLength(objects.length);
    expect(objects.map((o) => o.kind)).toEqual(
      expect.arrayContaining(['Deployment', 'PodDisruptionBudget', 'ServiceAccount', 'Role', 'RoleBinding']),
    );
  });
});
