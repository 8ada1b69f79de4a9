// `rollgate validate DIR` renders the kustomizations it finds (real kubectl kustomize), as a source in `auto` reads its path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runValidate, type ValidateOptions } from '../../../src/cli/commands/validate.ts';

const root = join(import.meta.dirname, '..', '..', '..');

async function validate(paths: string[], cwd: string, options: Partial<ValidateOptions> = {}) {
  let stdout = '';
  let stderr = '';
  const previous = process.cwd();
  process.chdir(cwd);
  try {
    const code = await runValidate(
      paths,
      { output: 'text', ...options },
      {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
      },
    );
    return { code, stdout, stderr, lines: stdout.trimEnd().split('\n') };
  } finally {
    process.chdir(previous);
  }
}

const ROLLOUT = (setWeight: number) => `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: "nginx:1.27"
          envFrom: [{configMapRef: {name: web-config}}]
  strategy: {canary: {steps: [{setWeight: ${setWeight}}]}}
`;

let dir: string;
function write(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-validate-render-'));
  write({
    // A base and an overlay that renders (a patch making the Rollout invalid: seen only when rendered).
    'good/base/kustomization.yaml':
      'resources: [rollout.yaml]\nconfigMapGenerator:\n  - name: web-config\n    literals: [A=1]\n',
    'good/base/rollout.yaml': ROLLOUT(50),
    'good/overlay/kustomization.yaml':
      'resources: [../base]\nnamePrefix: prod-\npatches:\n  - path: weight.yaml\n',
    'good/overlay/weight.yaml':
      'apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: web}\nspec: {strategy: {canary: {steps: [{setWeight: 150}]}}}\n',
    // One that does not render, one refused before rendering, a chart, and a plain file beside them.
    'bad/missing/kustomization.yaml':
      'resources:\n  - rollout.yaml\npatches:\n  - path: missing-patch.yaml\n',
    'bad/missing/rollout.yaml': ROLLOUT(50),
    'bad/remote/kustomization.yaml': 'resources:\n  - rollout.yaml\n  - github.com/acme/web//base?ref=v1\n',
    'bad/remote/rollout.yaml': ROLLOUT(50),
    'bad/chart/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 1.0.0\n',
    'bad/chart/templates/rollout.yaml': '{{ .Values.broken }}\n',
    'bad/plain/rollout.yaml': ROLLOUT(20),
  });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rollgate validate renders kustomizations', () => {
  it("examples/: the kustomize layout's overlays are rendered and valid, its patch files are not read as Rollouts", async () => {
    const run = await validate(['examples/'], root);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('rollout-replicas.yaml');
    expect(run.stdout).not.toContain('rollout-resources.yaml');
    expect(run.lines.at(-1)).toBe('14 objects checked: 14 valid, 0 invalid, 29 skipped');
  });

  it('reports the rendered objects at the kustomization file, the base not on its own', async () => {
    const run = await validate(['good'], dir);
    expect(run.code).toBe(1);
    expect(run.lines).toEqual([
      'good/overlay/kustomization.yaml (rendered):19:9: Rollout/prod-web: spec.strategy.canary.steps[0].setWeight: must be between 0 and 100, got 150',
      'note: skipped 1 object of kinds Rollgate does not validate (ConfigMap)',
      '1 object checked: 0 valid, 1 invalid, 1 skipped',
    ]);
  });

  it("render problems: kustomize's message or the preflight's line at the kustomization file; a chart is the Helm problem; plain YAML beside them is read", async () => {
    const run = await validate(['bad'], dir);
    expect(run.code).toBe(1);
    const problems = run.lines.filter((line) => !line.startsWith('note:')).slice(0, -1);
    expect(problems).toHaveLength(3);
    const at = (file: string) => problems.find((line) => line.startsWith(file)) ?? '';
    expect(at('bad/chart/Chart.yaml')).toMatch(
      /^bad\/chart\/Chart\.yaml:1:1: a Helm chart: Rollgate does not render Helm/,
    );
    expect(at('bad/missing/')).toMatch(
      /^bad\/missing\/kustomization\.yaml:1:1: kustomize build \S*missing: .*missing-patch\.yaml: no such file/,
    );
    expect(at('bad/remote/')).toBe(
      "bad/remote/kustomization.yaml:3:1: resources: github.com/acme/web//base?ref=v1 is a repository on a forge: Rollgate renders only what is in the source's repository (vendor the base into the repository, or pin it in CI)",
    );
    // The YAML inside the apps' folders is not read as plain; the plain file beside them is (the 1 valid).
    expect(run.stdout).not.toContain('templates/rollout.yaml');
    expect(run.lines.at(-1)).toBe('4 objects checked: 1 valid, 3 invalid, 0 skipped');
  });

  it('--render plain reads every YAML file as before (the patch as a whole Rollout)', async () => {
    const run = await validate(['good'], dir, { render: 'plain' });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('good/overlay/weight.yaml:');
    expect(run.stdout).not.toContain('(rendered)');
  });
});
