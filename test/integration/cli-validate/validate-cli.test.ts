// `rollgate validate` end to end: the real CLI entry (bin/rollgate.js), its output and exit codes.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerValidateCommand, runValidate } from '../../../src/cli/commands/validate.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const corpus = upstreamCorpus('argo-rollouts/examples', import.meta.filename);

function rollgate(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'rollgate.js'), ...args], { cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const GOOD = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
  strategy:
    canary:
      steps: [{setWeight: 50}, {pause: {duration: 1m}}]
`;

/** Runs the command's function in-process (spawning the CLI costs seconds per call on a busy machine). */
async function validateInProcess(paths: string[], output: 'text' | 'json', cwd: string) {
  let stdout = '';
  let stderr = '';
  const previous = process.cwd();
  process.chdir(cwd);
  try {
    const code = await runValidate(
      paths,
      { output },
      {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
      },
    );
    return { code, stdout, stderr };
  } finally {
    process.chdir(previous);
  }
}

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-validate-'));
  mkdirSync(join(dir, 'good', 'nested'), { recursive: true });
  writeFileSync(join(dir, 'good', 'nested', 'web.yaml'), GOOD);
  writeFileSync(join(dir, 'good', 'notes.txt'), 'not yaml, not walked');
  mkdirSync(join(dir, 'bad'));
  writeFileSync(
    join(dir, 'bad', 'api.yml'),
    GOOD.replace('setWeight: 50', 'setWeight: 150').replace('name: web\n', 'name: api\n'),
  );
  writeFileSync(join(dir, 'bad', 'service.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rollgate validate', () => {
  it('exits 0 and prints a summary when everything is valid', async () => {
    const run = await validateInProcess(['good'], 'text', dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('1 object checked: 1 valid, 0 invalid, 0 skipped\n');
  });

  it('--output json gives objects and a summary', async () => {
    const run = await validateInProcess(['bad/api.yml'], 'json', dir);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as {
      objects: Array<Record<string, unknown>>;
      summary: Record<string, number>;
    };
    expect(report.summary).toEqual({ valid: 0, invalid: 1, skipped: 0 });
    expect(report.objects[0]).toMatchObject({
      file: 'bad/api.yml',
      line: 1,
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      name: 'api',
      valid: false,
      errors: [
        {
          path: 'spec.strategy.canary.steps[0].setWeight',
          line: 15,
          message: 'must be between 0 and 100, got 150',
        },
      ],
      warnings: [],
    });
  });

  it('the real entry (bin/rollgate.js): exit 1 with one line per problem, exit 2 for a missing path', async () => {
    // Spawned in parallel: each start of the CLI costs seconds on a busy machine.
    const [bad, missing] = await Promise.all([
      rollgate(['validate', 'bad', 'good'], dir),
      rollgate(['validate', 'nowhere'], dir),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stdout.split('\n')).toEqual([
      'bad/api.yml:15:16: Rollout/api: spec.strategy.canary.steps[0].setWeight: must be between 0 and 100, got 150',
      'note: skipped 1 object of kinds Rollgate does not validate (Service)',
      '2 objects checked: 1 valid, 1 invalid, 1 skipped',
      '',
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such file or directory: nowhere');
  });

  it('refuses a call without a path as a usage error', async () => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    registerValidateCommand(program);
    const error = await program.parseAsync(['node', 'rollgate', 'validate']).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(CommanderError);
    expect((error as CommanderError).code).toBe('commander.missingArgument');
  });

  it('accepts an AnalysisRun and a Job written with generateName; one with neither name is still refused', async () => {
    mkdirSync(join(dir, 'generated'));
    const run = (meta: string) =>
      `apiVersion: argoproj.io/v1alpha1\nkind: AnalysisRun\nmetadata:\n${meta}spec:\n  metrics: [{name: up, provider: {web: {url: "http://x"}}}]\n`;
    const job =
      'apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: smoke-}\nspec: {template: {spec: {}}}\n';
    writeFileSync(join(dir, 'generated', 'runs.yaml'), `${run('  generateName: smoke-\n')}---\n${job}`);
    const good = await validateInProcess(['generated'], 'text', dir);
    expect(good.code).toBe(0);
    expect(good.stdout.split('\n').at(-2)).toBe('1 object checked: 1 valid, 0 invalid, 1 skipped');

    writeFileSync(join(dir, 'generated', 'unnamed.yaml'), run('  labels: {a: b}\n'));
    const bad = await validateInProcess(['generated/unnamed.yaml'], 'text', dir);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(
      'generated/unnamed.yaml:3:1: AnalysisRun/(unnamed): metadata.name: required',
    );
  });

  it.skipIf(corpus.missing)('tells the truth about the Argo Rollouts examples', async () => {
    const run = await validateInProcess([corpus.folder], 'text', dir);
    expect(run.code).toBe(1);
    const summary = run.stdout.trim().split('\n').at(-1);
    expect(summary).toBe('29 objects checked: 25 valid, 4 invalid, 45 skipped');
    // Its notifications folder is a kustomization (rendered, as a source would): its base is outside the
    // folder, which is said at the line; its Rollout is no longer a duplicate of the top-level one.
    expect(run.stdout).toMatch(
      /notifications\/kustomization\.yaml:5:1: resources: \.\.\/\.\.\/manifests\/notifications leaves the repository/,
    );
    expect(run.stdout).not.toContain('duplicate Rollout "rollout-canary"');
    // Blue-green is driven: Argo's blue-green example is valid as it is.
    expect(run.stdout).not.toContain('rollout-bluegreen.yaml');
    // So is workloadRef: its examples pass (the second only repeats the first one's name).
    expect(run.stdout).not.toContain('workloadRef');
    expect(run.stdout).not.toMatch(/rollout-template-ref\.yaml:\d+:\d+:/);
    // So is Ambassador: its example's Rollout is valid.
    expect(run.stdout).not.toMatch(/ambassador\/rollout\.yaml:\d+:\d+:/);
    // So are APISIX (its header route beside setCanaryScale in one step, as Argo allows) and App Mesh.
    expect(run.stdout).not.toMatch(/apisix\/rollout\.yaml:\d+:\d+:/);
    expect(run.stdout).not.toMatch(/appmesh\/canary-rollout\.yaml:\d+:\d+:/);
    // So are weighted experiment templates with Istio, SMI and ALB: nothing about a weight is said (the Istio
    // example is reported only for reusing the name of the Istio mirror example).
    expect(run.stdout).not.toContain('.weight');
    expect(run.stdout).not.toMatch(/rollout-(smi|alb)-experiment-step\.yaml:\d+:\d+:/);
    expect(run.stdout).toMatch(
      /istio-host-split-experiment-step\.yaml:50:3: Rollout\/istio-host-split: metadata\.name: duplicate Rollout/,
    );
  });
});
