// kubectl's conventions in `rollgate`, against `rollgate sandbox` run as a process: --context, -o
// json|yaml|name|wide compared with the real kubectl's, bash completion in a real bash, and the
// kubectl-rollgate plugin found by the real kubectl on PATH.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RolloutTree } from '../../../src/views/rollout-tree.ts';
import { runCli } from '../../support/run-cli.ts';
import { startSandboxCommand, type SandboxCommand } from '../../support/sandbox-command.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';

const exec = promisify(execFile);
const BIN = resolve('bin');

let sandbox: SandboxCommand;
/** A kubeconfig whose current context points nowhere; `team-a` reaches the sandbox, namespace team-a. */
let kubeconfig: string;
/** Holds `rollgate`, linked to bin/rollgate.js as npm links a package's bin. */
let linked: string;
const at = (...flags: string[]): string[] => ['--kubeconfig', kubeconfig, '--context', 'team-a', ...flags];

const rolloutYaml = (name: string) => `apiVersion: rollgate.dev/v1alpha1
kind: Rollout
metadata: {name: ${name}, namespace: team-a}
spec:
  replicas: 2
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: app, image: "nginx:1.27"}]}
  strategy: {canary: {steps: [{setWeight: 50}, {pause: {}}]}}
`;

beforeAll(async () => {
  sandbox = await startSandboxCommand([], 'rollgate-conventions-');
  const nowhere = `http://127.0.0.1:${await closedLoopbackPort()}`;
  kubeconfig = join(sandbox.dir, 'two-contexts.kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters:
- {name: sandbox, cluster: {server: "${sandbox.server}", insecure-skip-tls-verify: true}}
- {name: nowhere, cluster: {server: "${nowhere}", insecure-skip-tls-verify: true}}
users:
- {name: someone, user: {}}
contexts:
- {name: team-a, context: {cluster: sandbox, user: someone, namespace: team-a}}
- {name: nowhere, context: {cluster: nowhere, user: someone}}
current-context: nowhere
`,
  );
  expect((await runCli('install', '--kubeconfig', sandbox.kubeconfig)).code).toBe(0);
  await sandbox.kubectl('create', 'namespace', 'team-a');
  const manifest = join(sandbox.dir, 'rollouts.yaml');
  writeFileSync(manifest, `${rolloutYaml('web')}---\n${rolloutYaml('api')}`);
  await sandbox.kubectl('apply', '-f', manifest);
  linked = mkdtempSync(join(tmpdir(), 'rollgate-bin-'));
  symlinkSync(join(BIN, 'rollgate.js'), join(linked, 'rollgate'));
}, 120_000);

afterAll(async () => {
  await sandbox?.stop();
  if (linked !== undefined) rmSync(linked, { recursive: true, force: true });
});

describe('--context', () => {
  it("reaches the context's cluster and takes its namespace, where the current context reaches nothing", async () => {
    const named = await runCli('get', 'rollout', 'web', ...at('-o', 'name'));
    expect(named).toEqual({ code: 0, stdout: 'rollout.rollgate.dev/web\n', stderr: '' });
    const list = await runCli('list', 'rollouts', ...at('-o', 'name'));
    expect(list.stdout).toBe('rollout.rollgate.dev/api\nrollout.rollgate.dev/web\n');
    // Without --context the current one is used: nothing answers there.
    const current = await runCli('get', 'rollout', 'web', '--kubeconfig', kubeconfig, '-o', 'name');
    expect(current.code).toBe(1);
    expect(current.stderr).toMatch(/ECONNREFUSED|connect/);
  });

  it('refuses a context the kubeconfig does not hold, naming those it does', async () => {
    const unknown = await runCli('pause', 'web', '--kubeconfig', kubeconfig, '--context', 'team-b');
    expect(unknown).toMatchObject({
      code: 1,
      stderr: `rollgate: context "team-b" not found in kubeconfig ${kubeconfig} (contexts: team-a, nowhere)\n`,
    });
  });
});

describe('-o', () => {
  const kubectlJson = async (...args: string[]): Promise<unknown> =>
    JSON.parse(await sandbox.kubectl('-n', 'team-a', 'get', ...args, '-o', 'json')) as unknown;

  it('json and yaml print the Rollout as kubectl prints it, the list as a kubectl List', async () => {
    const want = await kubectlJson('rollouts.rollgate.dev', 'web');
    const json = await runCli('get', 'rollout', 'web', ...at('-o', 'json'));
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(want);
    const yaml = await runCli('get', 'rollout', 'web', ...at('-o', 'yaml'));
    expect(parse(yaml.stdout)).toEqual(want);
    // kubectl's own YAML, and a timestamp quoted so that a YAML 1.1 reader keeps it a string.
    expect(yaml.stdout).toMatch(/^apiVersion: rollgate\.dev\/v1alpha1\nkind: Rollout\nmetadata:\n/);
    expect(yaml.stdout).toMatch(/\n {2}creationTimestamp: "\d{4}-/);
    expect(yaml.stdout).toContain('\n      - setWeight: 50\n');

    const list = await runCli('list', 'rollouts', ...at('-o', 'json'));
    expect(JSON.parse(list.stdout)).toEqual(await kubectlJson('rollouts.rollgate.dev'));
    expect(parse((await runCli('list', 'rollouts', ...at('-o', 'yaml'))).stdout)).toMatchObject({
      apiVersion: 'v1',
      kind: 'List',
      items: [{ metadata: { name: 'api' } }, { metadata: { name: 'web' } }],
    });
  });

  it('leaves managedFields out unless --show-managed-fields, as kubectl does', async () => {
    const plain = JSON.parse((await runCli('get', 'rollout', 'web', ...at('-o', 'json'))).stdout) as {
      metadata: Record<string, unknown>;
    };
    expect(plain.metadata).not.toHaveProperty('managedFields');
    const shown = JSON.parse(
      (await runCli('get', 'rollout', 'web', ...at('-o', 'json', '--show-managed-fields'))).stdout,
    ) as { metadata: { managedFields: Array<{ manager: string }> } };
    expect(shown.metadata.managedFields.map((entry) => entry.manager)).toContain('kubectl-client-side-apply');
  });

  it('wide adds columns to the table and to the tree; view-json is the tree', async () => {
    const wide = await runCli('list', 'rollouts', ...at('-o', 'wide'));
    const lines = wide.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +GROUP +STRATEGY +STATUS .* AVAILABLE +AGE +IMAGES$/);
    expect(lines[2]).toMatch(/^web +rollgate\.dev +Canary .* \d+s +nginx:1\.27$/);
    const text = await runCli('list', 'rollouts', ...at());
    expect(text.stdout.split('\n')[0]).not.toContain('IMAGES');

    const tree = await runCli('get', 'rollout', 'web', ...at('-o', 'wide'));
    expect(tree.stdout).toMatch(/\nNAME +KIND +STATUS +AGE +READY +CREATED +INFO\n/);
    expect(tree.stdout).toMatch(/\n⟳ web +Rollout .* 0\/2 +\d{4}-\d\d-\d\dT[\d:]+Z/);
    const view = JSON.parse((await runCli('get', 'rollout', 'web', ...at('-o', 'view-json'))).stdout);
    expect(view as RolloutTree).toMatchObject({ name: 'web', namespace: 'team-a', strategy: 'Canary' });
  });

  it('refuses a format it does not know, naming those it does (exit 2)', async () => {
    const refused = await runCli('list', 'rollouts', ...at('-o', 'xml'));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      "error: option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are text, wide, json, yaml, name, view-json.",
    );
  });
});

/** What bash's completion function answers for `line` (the cursor at its end), as a TAB would. */
async function bashCompletes(line: string): Promise<string[]> {
  const words = line.split(' ');
  const script = [
    'source <(rollgate completion bash)',
    `COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    `COMP_LINE='${line}'`,
    `COMP_POINT=${line.length}`,
    '__rollgate_complete',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const { stdout } = await exec('bash', ['--norc', '--noprofile', '-c', script], {
    env: { ...process.env, PATH: `${linked}${delimiter}${process.env.PATH ?? ''}` },
    timeout: 60_000,
  });
  return stdout.split('\n').filter((entry) => entry !== '');
}

describe('rollgate completion', () => {
  it('completes verbs, flags, their choices and rollout names in a real bash (no bash-completion package)', async () => {
    expect(await bashCompletes('rollgate pro')).toEqual(['promote', 'promotions']);
    expect(await bashCompletes('rollgate get ')).toEqual([
      'rollout',
      'ro',
      'fleet',
      'flt',
      'experiment',
      'exp',
    ]);
    expect(await bashCompletes('rollgate get rollout --cont')).toEqual(['--context']);
    expect(await bashCompletes('rollgate get rollout --clu')).toEqual(['--cluster']);
    expect(await bashCompletes('rollgate list rollouts -o ')).toEqual([
      'text',
      'wide',
      'json',
      'yaml',
      'name',
      'view-json',
    ]);
    expect(await bashCompletes('rollgate completion ')).toEqual(['bash', 'zsh', 'fish']);
    // Names from the cluster the words point at: its context, its namespace.
    expect(await bashCompletes(`rollgate promote --kubeconfig ${kubeconfig} --context team-a `)).toEqual([
      'api',
      'web',
    ]);
    expect(await bashCompletes(`rollgate promote --kubeconfig ${kubeconfig} --context team-a w`)).toEqual([
      'web',
    ]);
    // The hidden answering command is not a verb to offer.
    expect(await bashCompletes('rollgate comp')).toEqual(['completion']);
    // Eight bash runs, each starting the CLI: generous on a loaded machine.
  }, 240_000);

  it('leaves a path to the shell: files are allowed where a flag asks for one, not elsewhere', async () => {
    const answer = async (...words: string[]): Promise<string> =>
      (await exec(join(linked, 'rollgate'), ['complete', '--', ...words], { timeout: 60_000 })).stdout;
    expect(await answer('get', 'rollout', '--kubeconfig', '')).toBe(':0\n');
    expect(await answer('validate', '')).toBe(':0\n');
    expect(await answer('get', 'rollout', '--group', '')).toBe('rollgate.dev\t\nargoproj.io\t\n:4\n');
    const { stdout } = await exec(
      'bash',
      ['--norc', '--noprofile', '-c', 'source <(rollgate completion bash); complete -p rollgate'],
      { env: { ...process.env, PATH: `${linked}${delimiter}${process.env.PATH ?? ''}` } },
    );
    expect(stdout).toBe('complete -o default -F __rollgate_complete rollgate\n');
  }, 120_000);

  it('writes zsh and fish scripts that call back the same command', async () => {
    const zsh = await runCli('completion', 'zsh');
    expect(zsh.stdout).toMatch(/^#compdef rollgate\ncompdef _rollgate rollgate\n/);
    expect(zsh.stdout).toContain('rollgate complete --');
    const fish = await runCli('completion', 'fish');
    expect(fish.stdout).toContain('complete -c rollgate ');
    expect(fish.stdout).toContain('rollgate complete --');
    expect((await runCli('completion', 'tcsh')).code).toBe(2);
  });
});

describe('kubectl rollgate', () => {
  const withBin = { ...process.env, PATH: `${BIN}${delimiter}${process.env.PATH ?? ''}` };
  const kubectl = async (...args: string[]): Promise<string> =>
    (await exec('kubectl', args, { env: withBin, timeout: 60_000 })).stdout;

  it('is found by the real kubectl on PATH and shows a rollout', async () => {
    expect(await kubectl('plugin', 'list', '--name-only')).toContain('kubectl-rollgate');
    const tree = await kubectl('rollgate', 'get', 'rollout', 'web', ...at());
    expect(tree).toMatch(/^Name: +web\nNamespace: +team-a\n/);
    expect(await kubectl('rollgate', 'list', 'rollouts', ...at('-o', 'name'))).toBe(
      'rollout.rollgate.dev/api\nrollout.rollgate.dev/web\n',
    );
    expect(await kubectl('rollgate', '--help')).toMatch(/^Usage: kubectl rollgate /);
  }, 120_000);

  it("completes through kubectl's plugin completion (kubectl_complete-rollgate)", async () => {
    const answer = await kubectl('__complete', 'rollgate', 'get', 'rollout', ...at(''));
    expect(answer.split('\n').filter((line) => !line.startsWith('Completion ended'))).toEqual([
      'api',
      'web',
      ':4',
      '',
    ]);
  }, 120_000);
});
