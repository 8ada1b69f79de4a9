// `rollgate plan FILE --from REF` where FILE is a kustomization's input: its apps rendered (real kubectl kustomize) from the work tree and at REF, in a real Git repository.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlanReport } from '../../../src/plan/plan-report-text.ts';
import { git, makeTempDir, type TempDir } from '../../support/git-fixtures.ts';
import {
  baseKustomization,
  overlayKustomization,
  webLayout,
  webRolloutYaml,
} from '../../support/kustomize-layout.ts';
import { runCli as run } from '../../support/run-cli.ts';

const STAGING = 'apps/web/overlays/staging';
const PROD = 'apps/web/overlays/prod';
const BASE = 'apps/web/base';

describe('rollgate plan of a kustomization input', () => {
  let repo: TempDir;
  const at = (path: string): string => join(repo.path, path);
  const write = (files: Record<string, string>): void => {
    for (const [path, text] of Object.entries(files)) writeFileSync(at(path), text);
  };
  beforeAll(() => {
    repo = makeTempDir('rollgate-plan-kustomize-');
    git(repo.path, ['init', '--quiet', '--initial-branch=main']);
    git(repo.path, ['config', 'user.email', 'test@example.com']);
    git(repo.path, ['config', 'user.name', 'test']);
    const files: Record<string, string> = {
      ...webLayout({ stagingTag: '1.1', prodTag: '1.0' }),
      'plain/other.yaml': webRolloutYaml('other:1.0').replace('name: web\n', 'name: other\n'),
    };
    for (const path of Object.keys(files)) mkdirSync(dirname(at(path)), { recursive: true });
    write(files);
    git(repo.path, ['add', '.']);
    git(repo.path, ['commit', '--quiet', '-m', 'the layout']);
  });
  // Each test edits the work tree and plans it against HEAD; the next starts from HEAD again.
  afterEach(() => git(repo.path, ['checkout', '--quiet', '--', '.']));
  afterAll(() => repo.remove());

  it("an overlay's images: change plans that overlay's Rollout (prefixed name) as a canary, and no other", async () => {
    write({ [`${STAGING}/kustomization.yaml`]: overlayKustomization('staging', '1.2') });
    const result = await run('plan', at(`${STAGING}/kustomization.yaml`), '--from', 'HEAD');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const blocks = result.stdout.trimEnd().split('\n\n');
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatch(
      new RegExp(
        `^rollout default/staging-web \\(rendered from ${at(STAGING)}/kustomization\\.yaml, against HEAD\\)\\n {2}new revision: nginx:1\\.1 → nginx:1\\.2 `,
      ),
    );
    expect(result.stdout).toMatch(/\n {2}0 +setWeight: 50 +2 +/);
    expect(result.stdout).toMatch(/\n {2}1 +pause \(until promoted\) /);
    expect(result.stdout).not.toContain('prod-web');

    const json = JSON.parse(
      (await run('plan', at(`${STAGING}/kustomization.yaml`), '--from', 'HEAD', '-o', 'json')).stdout,
    ) as PlanReport[];
    expect(json).toEqual([
      expect.objectContaining({
        file: at(`${STAGING}/kustomization.yaml`),
        rendered: true,
        against: 'HEAD',
        plan: expect.objectContaining({ name: 'staging-web', change: 'new-revision' }),
      }),
    ]);
  });

  it("a patch's change plans its overlay (a replica count, no new revision), not the patch as a Rollout", async () => {
    write({
      [`${STAGING}/replicas.yaml`]:
        'apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: web\nspec:\n  replicas: 5\n',
    });
    const result = await run('plan', at(`${STAGING}/replicas.yaml`), '--from', 'HEAD');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^rollout default\/staging-web \(rendered from .*overlays\/staging\/kustomization\.yaml, against HEAD\)\n/,
    );
    expect(result.stdout).toMatch(
      /not a new revision \(pod template unchanged, \w+ → \w+\): replicas: 3 → 5; no step runs\n$/,
    );
  });

  it("a base change plans both overlays; a generator input's change is a new revision of each", async () => {
    write({
      [`${BASE}/rollout.yaml`]: webRolloutYaml().replace(
        'image: nginx:1.0\n',
        'image: nginx:1.0\n          args: [--verbose]\n',
      ),
    });
    const resource = await run('plan', at(`${BASE}/rollout.yaml`), '--from', 'HEAD', '-o', 'json');
    expect(resource.stderr).toBe('');
    expect(resource.code).toBe(0);
    const plans = (JSON.parse(resource.stdout) as PlanReport[]).map((report) => ({
      file: report.file.slice(repo.path.length + 1),
      name: report.plan.name,
      change: report.plan.change,
    }));
    expect(plans).toEqual([
      { file: `${PROD}/kustomization.yaml`, name: 'prod-web', change: 'new-revision' },
      { file: `${STAGING}/kustomization.yaml`, name: 'staging-web', change: 'new-revision' },
    ]);
    git(repo.path, ['checkout', '--quiet', '--', '.']);

    write({ [`${BASE}/kustomization.yaml`]: baseKustomization('hi') });
    const generator = await run('plan', at(`${BASE}/kustomization.yaml`), '--from', 'HEAD');
    expect(generator.code).toBe(0);
    expect(generator.stdout).toMatch(/rollout default\/prod-web \(rendered from .*\n {2}new revision: /);
    expect(generator.stdout).toMatch(/rollout default\/staging-web \(rendered from .*\n {2}new revision: /);
  });

  it('a plain YAML file of the same repository is planned as before', async () => {
    write({ 'plain/other.yaml': webRolloutYaml('other:2.0').replace('name: web\n', 'name: other\n') });
    const result = await run('plan', at('plain/other.yaml'), '--from', 'HEAD');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^rollout default/other \\(${at('plain/other.yaml')}, against HEAD\\)\\n {2}new revision: other:1\\.0 → other:2\\.0 `,
      ),
    );
  });

  it('an overlay new since --from plans a new rollout; one broken at --from is an error saying so', async () => {
    const canary = 'apps/web/overlays/canary';
    mkdirSync(at(canary), { recursive: true });
    write({ [`${canary}/kustomization.yaml`]: 'resources:\n  - ../../base\nnamePrefix: canary-\n' });
    const added = await run('plan', at(`${canary}/kustomization.yaml`), '--from', 'HEAD');
    expect(added.stderr).toBe('');
    expect(added.stdout).toMatch(
      /^rollout default\/canary-web \(rendered from .*, against HEAD\)\n {2}new rollout: /,
    );
    // HEAD~1 does not exist in a one-commit repository: the ref's error, as for a plain file.
    expect((await run('plan', at(`${STAGING}/kustomization.yaml`), '--from', 'HEAD~1')).code).toBe(1);
    git(repo.path, ['clean', '--quiet', '-fd']);

    write({ [`${PROD}/kustomization.yaml`]: overlayKustomization('prod', '1.0', '  - path: gone.yaml\n') });
    git(repo.path, ['commit', '--quiet', '-am', 'break prod']);
    write({ [`${PROD}/kustomization.yaml`]: overlayKustomization('prod', '1.0') });
    const fixed = await run('plan', at(`${PROD}/kustomization.yaml`), '--from', 'HEAD');
    expect(fixed.code).toBe(1);
    expect(fixed.stderr).toMatch(
      new RegExp(`^rollgate: ${at(PROD)}/kustomization\\.yaml at HEAD does not render: .*gone\\.yaml`),
    );
    git(repo.path, ['reset', '--quiet', '--hard', 'HEAD~1']);
  });

  it("a broken overlay is an error naming its kustomization and kustomize's message (exit 1)", async () => {
    write({
      [`${PROD}/kustomization.yaml`]: overlayKustomization('prod', '1.1', '  - path: missing.yaml\n'),
    });
    const result = await run('plan', at(`${PROD}/kustomization.yaml`), '--from', 'HEAD');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      new RegExp(
        `^rollgate: ${at(PROD)}/kustomization\\.yaml does not render: ${at(PROD)}/kustomization\\.yaml:1: kustomize build ${PROD}: .*missing\\.yaml`,
      ),
    );
  });
});
