// The real kubectl against `rollgate sandbox` started from the CLI: apply, patch, CRDs, round trips, cascades, SSA, watch.
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxCommand, type SandboxCommand } from '../../support/sandbox-command.ts';
import { eventually } from '../../support/eventually.ts';

const run = promisify(execFile);
let sandbox: SandboxCommand;
const kubectl = (...args: string[]): Promise<string> => sandbox.kubectl(...args);

async function kubectlFails(...args: string[]): Promise<string> {
  try {
    await kubectl(...args);
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
  throw new Error(`kubectl ${args.join(' ')} succeeded but was expected to fail`);
}

function manifest(name: string, text: string): string {
  const path = join(sandbox.dir, name);
  writeFileSync(path, text);
  return path;
}

beforeAll(async () => {
  sandbox = await startSandboxCommand(
    ['--ready-delay-ms', '100', '--missing-image', 'registry.example/gone:*'],
    'rollgate-kubectl-',
  );
}, 60_000);

afterAll(async () => {
  await sandbox?.stop();
});

const replicaSetYaml = (name: string, replicas: number, image = 'nginx:1.27') => `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: app
        image: ${image}
`;

const podCount = async (app: string): Promise<number> =>
  (await kubectl('get', 'pods', '-l', `app=${app}`, '-o', 'name')).split('\n').filter((l) => l.trim() !== '')
    .length;

async function waitForPodCount(app: string, count: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await podCount(app)) !== count && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  expect(await podCount(app)).toBe(count);
}

describe('kubectl against rollgate sandbox', () => {
  it('prints one ready line naming the kubeconfig and the server', () => {
    expect(sandbox.readyLine).toMatch(
      new RegExp(
        `^sandbox ready: kubeconfig ${sandbox.kubeconfig.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} server http://127\\.0\\.0\\.1:\\d+$`,
      ),
    );
  });

  it('applies a ReplicaSet whose pods become Ready', async () => {
    expect(await kubectl('apply', '-f', manifest('rs.yaml', replicaSetYaml('web', 2)))).toContain(
      'replicaset.apps/web created',
    );
    await kubectl('wait', '--for=condition=Ready', 'pod', '-l', 'app=web', '--timeout=20s');
    const table = await kubectl('get', 'rs', 'web');
    expect(table).toMatch(/web\s+2\s+2\s+2\s+/);
    expect(await kubectl('get', 'pods', '-l', 'app=web')).toMatch(/web-[a-z0-9]{5}\s+1\/1\s+Running\s+0/);
  });

  it('patches replicas with strategic, merge and json patches', async () => {
    await kubectl('patch', 'rs', 'web', '-p', '{"spec":{"replicas":3}}');
    await kubectl('wait', '--for=jsonpath={.status.readyReplicas}=3', 'rs/web', '--timeout=20s');
    await kubectl('patch', 'rs', 'web', '--type=merge', '-p', '{"spec":{"replicas":1}}');
    await kubectl('wait', '--for=jsonpath={.status.replicas}=1', 'rs/web', '--timeout=20s');
    // Surplus pods terminate gracefully (about a second in the sandbox) before they disappear.
    await waitForPodCount('web', 1);
    await kubectl(
      'patch',
      'rs',
      'web',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/replicas","value":2}]',
    );
    await kubectl('wait', '--for=jsonpath={.status.replicas}=2', 'rs/web', '--timeout=20s');
    await waitForPodCount('web', 2);
  });

  it('scales through the scale subresource', async () => {
    expect(await kubectl('scale', 'rs', 'web', '--replicas=3')).toContain('replicaset.apps/web scaled');
    await kubectl('wait', '--for=jsonpath={.status.readyReplicas}=3', 'rs/web', '--timeout=20s');
    expect(await podCount('web')).toBe(3);
    await kubectl('scale', 'rs', 'web', '--replicas=2');
    await kubectl('wait', '--for=jsonpath={.status.replicas}=2', 'rs/web', '--timeout=20s');
  });

  it('creates namespaces, configmaps and secrets with kubectl create generators', async () => {
    expect(await kubectl('create', 'namespace', 'team-a')).toContain('namespace/team-a created');
    await kubectl('create', 'configmap', 'settings', '-n', 'team-a', '--from-literal=mode=fast');
    await kubectl('create', 'secret', 'generic', 'creds', '-n', 'team-a', '--from-literal=user=admin');
    expect(await kubectl('get', 'configmap', 'settings', '-n', 'team-a', '-o', 'jsonpath={.data.mode}')).toBe(
      'fast',
    );
    const secret = await kubectl(
      'get',
      'secret',
      'creds',
      '-n',
      'team-a',
      '-o',
      'jsonpath={.type} {.data.user}',
    );
    expect(secret).toBe(`Opaque ${Buffer.from('admin').toString('base64')}`);
    expect(await kubectl('delete', 'namespace', 'team-a')).toContain('namespace "team-a" deleted');
  });

  it('round-trips get -o json through replace, and re-apply reports unchanged', async () => {
    const json = await kubectl('get', 'rs', 'web', '-o', 'json');
    const parsed = JSON.parse(json) as { metadata: { uid: string; resourceVersion: string } };
    expect(await kubectl('replace', '-f', manifest('web.json', json))).toContain(
      'replicaset.apps/web replaced',
    );
    const after = JSON.parse(await kubectl('get', 'rs', 'web', '-o', 'json')) as {
      metadata: { uid: string };
    };
    expect(after.metadata.uid).toBe(parsed.metadata.uid);
    expect(await kubectl('apply', '-f', join(sandbox.dir, 'rs.yaml'))).toContain(
      'replicaset.apps/web configured',
    );
    expect(await kubectl('apply', '-f', join(sandbox.dir, 'rs.yaml'))).toContain(
      'replicaset.apps/web unchanged',
    );
  });

  it('serves a CRD, then a custom object with a status subresource', async () => {
    const crd = manifest(
      'crd.yaml',
      `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Phase, type: string, jsonPath: .status.phase}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
    );
    await kubectl('apply', '-f', crd);
    await kubectl('wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=20s');
    await kubectl(
      'apply',
      '-f',
      manifest('w.yaml', 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1}\n'),
    );
    await kubectl(
      'patch',
      'widget',
      'w1',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Ready"}}',
    );
    expect(await kubectl('get', 'wd', 'w1')).toMatch(/w1\s+Ready/);
    await kubectl(
      'patch',
      'widget',
      'w1',
      '--type=merge',
      '-p',
      '{"spec":{"size":2},"status":{"phase":"Ignored"}}',
    );
    expect(
      await kubectl('get', 'widget', 'w1', '-o', 'jsonpath={.metadata.generation} {.status.phase}'),
    ).toBe('2 Ready');
    expect(await kubectlFails('patch', 'widget', 'w1', '-p', '{"spec":{"size":3}}')).toContain(
      'application/strategic-merge-patch+json is not supported',
    );
  });

  it('applies server-side, reporting conflicts between field managers', async () => {
    const path = manifest('ssa.yaml', replicaSetYaml('ssa', 1));
    expect(await kubectl('apply', '--server-side', '-f', path)).toContain('serverside-applied');
    const other = manifest('ssa-other.yaml', replicaSetYaml('ssa', 4));
    expect(await kubectlFails('apply', '--server-side', '--field-manager=other', '-f', other)).toContain(
      'conflict with "kubectl": .spec.replicas',
    );
    await kubectl('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', other);
    expect(await kubectl('get', 'rs', 'ssa', '-o', 'jsonpath={.spec.replicas}')).toBe('4');
  });

  it('describes a pod whose image is missing with the kubelet reason', async () => {
    await kubectl(
      'apply',
      '-f',
      manifest('pull.yaml', replicaSetYaml('pull', 1, 'registry.example/gone:1.0')),
    );
    await kubectl(
      'wait',
      '--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=ErrImagePull',
      'pod',
      '-l',
      'app=pull',
      '--timeout=20s',
    );
    // The kubelet shows ErrImagePull for 2 s after each failed attempt, then ImagePullBackOff until the next
    // one: on a loaded machine `describe` can start after the first (seen in CI on a two-core guest).
    expect(await kubectl('describe', 'pods', '-l', 'app=pull')).toMatch(
      /Image:\s+registry\.example\/gone:1\.0\n[\s\S]*State:\s+Waiting\n\s+Reason:\s+(ErrImagePull|ImagePullBackOff)\n/,
    );
  });

  it('streams changes to get -w', async () => {
    // One ConfigMap there before: kubectl prints the list (with it) before it watches from the list's
    // resourceVersion, so a change applied once the list is printed is streamed, whenever the watch opens.
    await kubectl(
      'apply',
      '-f',
      manifest('listed.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: listed}\ndata: {a: "1"}\n'),
    );
    const watcher = spawn('kubectl', [...sandbox.kubectlFlags, 'get', 'configmaps', '-w'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    watcher.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await eventually('the list printed', () => out.includes('listed'), { timeoutMs: 10_000, intervalMs: 20 });
    await kubectl(
      'apply',
      '-f',
      manifest('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched}\ndata: {a: "1"}\n'),
    );
    const deadline = Date.now() + 10_000;
    while (!out.includes('watched') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    watcher.kill('SIGTERM');
    expect(out).toMatch(/watched\s+1\s+/);
  });

  it('cascades a delete to the pods', async () => {
    expect(await kubectl('delete', 'rs', 'web')).toContain('replicaset.apps "web" deleted');
    await waitForPodCount('web', 0);
  });

  it('stops cleanly on SIGTERM', async () => {
    sandbox.child.kill('SIGTERM');
    const code = await new Promise((r) => sandbox.child.once('exit', r));
    expect(code).toBe(0);
  });
});

describe('rollgate sandbox usage errors', () => {
  it('exits 2 and says why for an out-of-range flag', async () => {
    const result = await run(process.execPath, [
      'bin/rollgate.js',
      'sandbox',
      '--conflict-rate',
      '2',
      '--kubeconfig',
      join(sandbox.dir, 'unused'),
    ]).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--conflict-rate must be a number between 0 and 1');
  });
});
