// `rollgate plan` through main(): against a real temporary Git repository (--from HEAD~1) and a sandbox cluster (--cluster).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanReport } from '../../../src/plan/plan-report-text.ts';
import { git, makeTempDir, type TempDir } from '../../support/git-fixtures.ts';
import { runCli as run } from '../../support/run-cli.ts';
import { ReconcileHarness, isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';

const manifest = (image: string, replicas: number): string => `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: app, image: "${image}"}]
  strategy:
    canary:
      steps:
        - setWeight: 25
        - pause: {duration: 5m}
        - setWeight: 50
        - pause: {}
`;

describe('rollgate plan', () => {
  let repo: TempDir;
  let file: string;
  const commit = (text: string, message: string): void => {
    writeFileSync(file, text);
    git(repo.path, ['add', '.']);
    git(repo.path, ['commit', '--quiet', '-m', message]);
  };
  beforeAll(() => {
    repo = makeTempDir('rollgate-plan-');
    git(repo.path, ['init', '--quiet', '--initial-branch=main']);
    file = join(repo.path, 'web.yaml');
    commit(manifest('app:1.0', 4), 'first');
    commit(manifest('app:2.0', 4), 'new image');
  });
  afterAll(() => repo.remove());

  it('--from HEAD~1: a new image is a new revision; its steps, counts, weights and minimum time', async () => {
    const result = await run('plan', file, '--from', 'HEAD~1');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^rollout default\/web \(.*web\.yaml, against HEAD~1\)\n {2}new revision: app:1\.0 → app:2\.0 /,
    );
    expect(result.stdout).toMatch(/\n {2}0 +setWeight: 25 +1 +3 +25%/);
    expect(result.stdout).toMatch(/\n {2}1 +pause: 5m +1 +3 +25% +5m +5m\n/);
    expect(result.stdout).toMatch(/\n {2}2 +setWeight: 50 +2 +2 +50%/);
    expect(result.stdout).toMatch(/\n {2}3 +pause \(until promoted\) +2 +2 +50% +until promoted +5m\n/);
    expect(result.stdout).toContain('full promotion after at least 5m (');

    const json = JSON.parse(
      (await run('plan', file, '--from', 'HEAD~1', '-o', 'json')).stdout,
    ) as PlanReport[];
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({
      against: 'HEAD~1',
      plan: { change: 'new-revision', minPromotionMs: 300_000 },
    });
  });

  it('a replicas-only commit is not a new revision; HEAD against itself is unchanged', async () => {
    commit(manifest('app:2.0', 6), 'scale');
    const scaled = await run('plan', file, '--from', 'HEAD~1');
    expect(scaled.code).toBe(0);
    expect(scaled.stdout).toMatch(
      /not a new revision \(pod template unchanged, \w+ → \w+\): replicas: 4 → 6; no step runs\n$/,
    );
    expect((await run('plan', file, '--from', 'HEAD')).stdout).toContain('unchanged: nothing to do');
    // HEAD~2 is the first commit: two changes back, the image differs again.
    expect((await run('plan', file, '--from', 'HEAD~2')).stdout).toContain('new revision: app:1.0 → app:2.0');
    expect((await run('plan', file, '--from', 'main~2')).stdout).toContain('new revision: app:1.0 → app:2.0');
  });

  it('-o markdown renders a table for a pull-request comment', async () => {
    const result = await run('plan', file, '--from', 'HEAD~2', '-o', 'markdown');
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('### Rollout `default/web`');
    expect(lines).toContain('| Step | Action | Canary | Stable | Weight | Pause | Analysis | Done after |');
    expect(lines).toContain('| 1 | pause: 5m | 2 | 5 | 25% | 5m |  | 5m |');
    expect(result.stdout).toContain('**Full promotion after at least 5m**');
  });

  it('a file not in Git at the ref is a new rollout; an unknown ref exits 1; --from with --cluster exits 2', async () => {
    const other = join(repo.path, 'other.yaml');
    writeFileSync(other, manifest('app:3.0', 2).replace('name: web', 'name: other'));
    expect((await run('plan', other, '--from', 'HEAD')).stdout).toContain(
      'new rollout: app:3.0 starts at full scale',
    );
    const unknown = await run('plan', file, '--from', 'no-such-branch');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no-such-branch names no commit of the repository/);
    const both = await run('plan', file, '--from', 'HEAD', '--cluster');
    expect(both.code).toBe(2);
    rmSync(other);
  });

  describe('--cluster', () => {
    let harness: ReconcileHarness;
    let dir: string;
    let kubeconfig: string;
    beforeAll(async () => {
      harness = await ReconcileHarness.start();
      ({ kubeconfig, dir } = await harness.writeKubeconfig());
    });
    afterAll(async () => {
      await harness.stop();
    });

    it("compares with the live Rollout's pod template", async () => {
      const key = await harness.createRollout(testRollout({ name: 'live', replicas: 2, image: 'app:1.0' }));
      await harness.runUntil(key, isFullyPromoted, { timeoutMs: 30_000 });
      const live = await harness.rollout(key);
      const sameTemplate = join(dir, 'live.yaml');
      const spec = { ...live.spec, replicas: 3 };
      writeFileSync(
        sameTemplate,
        JSON.stringify({ apiVersion: live.apiVersion, kind: 'Rollout', metadata: { name: 'live' }, spec }),
      );
      const scaled = await run('plan', sameTemplate, '--cluster', '--kubeconfig', kubeconfig);
      expect(scaled.stdout).toContain('against cluster');
      expect(scaled.stdout).toContain('not a new revision');
      expect(scaled.stdout).toContain('replicas: 2 → 3');
      const template = structuredClone(live.spec.template) as {
        spec: { containers: Array<{ image: string }> };
      };
      template.spec.containers[0]!.image = 'app:2.0';
      writeFileSync(
        sameTemplate,
        JSON.stringify({
          apiVersion: live.apiVersion,
          kind: 'Rollout',
          metadata: { name: 'live' },
          spec: { ...live.spec, template },
        }),
      );
      const changed = await run('plan', sameTemplate, '--cluster', '--kubeconfig', kubeconfig);
      expect(changed.stdout).toContain('new revision: app:1.0 → app:2.0');
      // The test rollout's default steps: 20 %, 10 s, 60 %, 10 s.
      expect(changed.stdout).toContain('full promotion after at least 20s');
    });
  });
});
