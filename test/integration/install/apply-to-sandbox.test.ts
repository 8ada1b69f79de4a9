// The rendered install applied to the sandbox API server with the real kubectl
// (`apply --server-side --dry-run=server`): every object of a kind the sandbox serves is accepted; the
// kinds it does not serve are exactly the RBAC ones, refused for that reason and no other.
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

/** The sandbox serves no rbac.authorization.k8s.io (yet): these kinds cannot be dry-run there. */
const RBAC_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];

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
  it('is accepted for every kind the sandbox serves; only RBAC kinds are not served', async () => {
    const objects = await renderInstall(install);
    const served = await servedKinds();
    const isServed = (o: RenderedObject): boolean => served.has(`${o.apiVersion} ${o.kind}`);
    const accepted = objects.filter(isServed);
    const unserved = objects.filter((o) => !isServed(o));

    const result = await applyDryRun(accepted);
    expect(result.code, result.stderr).toBe(0);
    const applied = result.stdout
      .split('\n')
      .filter((line) => line.endsWith('serverside-applied (server dry run)'));
    expect(applied).toHaveLength(accepted.length);
    expect(accepted.map((o) => o.kind)).toEqual(
      expect.arrayContaining(['Deployment', 'PodDisruptionBudget']),
    );

    expect([...new Set(unserved.map((o) => o.kind))].sort()).toEqual(
      RBAC_KINDS.filter((kind) => unserved.some((o) => o.kind === kind)),
    );
    for (const object of unserved) {
      const refused = await applyDryRun([object], '--validate=false');
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(
        `no matches for kind "${object.kind}" in version "${object.apiVersion}"`,
      );
    }
  });
});
