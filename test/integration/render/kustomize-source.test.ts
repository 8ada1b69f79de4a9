// A Git source with kustomizations (real kubectl kustomize, real git http-backend): what a diff renders, and what it holds.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ManifestChange } from '../../../src/git/manifest-diff.ts';
import { serveGitRepositories } from '../../../src/git/smart-http-server.ts';
import { GitSource } from '../../../src/git/source.ts';
import type { Source } from '../../../src/git/source.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { DEFAULT_RENDER_SETTINGS, Rendering } from '../../../src/render/rendering.ts';
import type { RenderSettings } from '../../../src/render/rendering.ts';
import { createBareRepository, makeTempDir, WorkingCopy } from '../../support/git-fixtures.ts';
import { baseKustomization, overlayKustomization, webLayout } from '../../support/kustomize-layout.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scene(settings: RenderSettings = DEFAULT_RENDER_SETTINGS) {
  const tmp = makeTempDir();
  cleanups.push(() => tmp.remove());
  const root = join(tmp.path, 'repos');
  createBareRepository(root, 'apps');
  const wc = new WorkingCopy(join(tmp.path, 'work'));
  const server = await serveGitRepositories({ root, receivePack: true });
  cleanups.push(() => server.stop());
  const url = `${server.url}/apps.git`;
  const rendering = await Rendering.start(settings, silentLogger);
  let caches = 0;
  const source = (overrides: Partial<Source> = {}) =>
    new GitSource(
      { name: 'web', url, branch: 'main', path: 'apps/web/overlays/staging', ...overrides },
      { cacheDir: join(tmp.path, `cache-${(caches += 1)}`), rendering },
    );
  const push = async (files: Record<string, string | null>): Promise<string> => {
    wc.write(files);
    const commit = wc.commit();
    await wc.push(url);
    return commit;
  };
  return { wc, push, source, rendering };
}

function summary(changes: ManifestChange[]): string[] {
  return changes.map((c) => `${c.change} ${c.key} ${c.file}`).sort();
}

function imageOf(change: ManifestChange | undefined): unknown {
  if (change === undefined || change.change === 'removed') return undefined;
  const spec = change.object.object.spec as { template: { spec: { containers: Array<{ image: string }> } } };
  return spec.template.spec.containers[0]?.image;
}

describe('a source on a kustomize overlay', () => {
  it('renders the overlay: prefixed objects, the overlay image, the generated ConfigMap referenced by the Rollout', async () => {
    const { push, source } = await scene();
    const first = await push(webLayout());
    const staging = source();
    const diff = await staging.diffReport(undefined, await staging.fetch());
    expect(diff.to).toBe(first);
    expect(diff.problems).toEqual([]);
    const file = 'apps/web/overlays/staging/kustomization.yaml';
    expect(summary(diff.changes)).toEqual([
      expect.stringMatching(new RegExp(`^added ConfigMap//staging-web-config-[a-z0-9]{10} ${file}$`)),
      `added Rollout//staging-web ${file}`,
      `added Service//staging-web ${file}`,
    ]);
    const rollout = diff.changes.find((c) => c.key === 'Rollout//staging-web');
    expect(imageOf(rollout)).toBe('nginx:1.1');
    const configMap = diff.changes.find((c) => c.key.startsWith('ConfigMap//staging-web-config-'));
    expect(configMap?.file).toBe(file);
    // The Rollout names the hash-suffixed ConfigMap (Rollgate teaches kustomize the Rollout's references).
    const spec = (rollout?.change === 'added' ? rollout.object.object : {}) as {
      spec?: {
        template: { spec: { containers: Array<{ envFrom: Array<{ configMapRef: { name: string } }> }> } };
      };
    };
    expect(spec.spec?.template.spec.containers[0]?.envFrom[0]?.configMapRef.name).toBe(
      configMap?.key.split('/')[2],
    );
    expect(diff.renders).toEqual({ renders: 1, cacheHits: 0, unchanged: 0 });
  });
});

describe('cost follows the change', () => {
  it("a push changing staging's images renders staging once and leaves prod alone; a base change renders both", async () => {
    const { push, source } = await scene();
    await push(webLayout());
    const staging = source();
    const prod = source({ name: 'prod', path: 'apps/web/overlays/prod' });
    const first = await staging.fetch();
    await staging.diffReport(undefined, first);
    await prod.fetch();
    await prod.diffReport(undefined, first);

    const tagged = await push({
      'apps/web/overlays/staging/kustomization.yaml': overlayKustomization('staging', '1.2'),
    });
    const stagingDiff = await staging.diffReport(first, await staging.fetch());
    expect(stagingDiff.to).toBe(tagged);
    expect(summary(stagingDiff.changes)).toEqual([
      'changed Rollout//staging-web apps/web/overlays/staging/kustomization.yaml',
    ]);
    expect(imageOf(stagingDiff.changes[0])).toBe('nginx:1.2');
    // One kustomize run: the old side was the first sync's new side.
    expect(stagingDiff.renders).toEqual({ renders: 1, cacheHits: 1, unchanged: 0 });
    const prodDiff = await prod.diffReport(first, await prod.fetch());
    expect(prodDiff.changes).toEqual([]);
    expect(prodDiff.renders).toEqual({ renders: 0, cacheHits: 0, unchanged: 1 });

    await push({
      'apps/web/base/service.yaml': null,
      'apps/web/base/kustomization.yaml': 'resources: [rollout.yaml]\n',
    });
    const baseDiff = await staging.diffReport(tagged, await staging.fetch());
    expect(baseDiff.changes.map((c) => `${c.change} ${c.key.replace(/-[a-z0-9]{10}$/, '')}`).sort()).toEqual([
      'changed Rollout//staging-web',
      'removed ConfigMap//staging-web-config',
      'removed Service//staging-web',
    ]);
    const prodBase = await prod.diffReport(tagged, await prod.fetch());
    expect(prodBase.changes.map((c) => `${c.change} ${c.key.replace(/-[a-z0-9]{10}$/, '')}`).sort()).toEqual([
      'changed Rollout//prod-web',
      'removed ConfigMap//prod-web-config',
      'removed Service//prod-web',
    ]);
  });

  it('a source holding several apps: each overlay is an app, the base is not, plain YAML beside them stays plain', async () => {
    const { push, source } = await scene();
    const first = await push({
      ...webLayout(),
      'apps/web/extra/configmap.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {a: "1"}\n',
    });
    const all = source({ path: 'apps/web' });
    const diff = await all.diffReport(undefined, await all.fetch());
    expect(diff.problems).toEqual([]);
    const byFile = new Map<string, string[]>();
    for (const change of diff.changes)
      byFile.set(change.file, [...(byFile.get(change.file) ?? []), change.key]);
    expect([...byFile.keys()].sort()).toEqual([
      'apps/web/extra/configmap.yaml',
      'apps/web/overlays/prod/kustomization.yaml',
      'apps/web/overlays/staging/kustomization.yaml',
    ]);
    expect(diff.renders?.renders).toBe(2);

    // A change to the prod overlay only: staging's key is the same, it is not rendered.
    await push({ 'apps/web/overlays/prod/kustomization.yaml': overlayKustomization('prod', '2.0') });
    const next = await all.diffReport(first, await all.fetch());
    expect(summary(next.changes)).toEqual([
      'changed Rollout//prod-web apps/web/overlays/prod/kustomization.yaml',
    ]);
    expect(next.renders).toEqual({ renders: 1, cacheHits: 1, unchanged: 1 });
  });
});

describe('what a render refuses', () => {
  it("a missing resource is a problem at the overlay's kustomization with kustomize's message; the app's objects are held, the other app proceeds", async () => {
    const { push, source } = await scene();
    const first = await push(webLayout());
    const all = source({ path: 'apps/web' });
    await all.diffReport(undefined, await all.fetch());
    await push({
      'apps/web/overlays/staging/kustomization.yaml': overlayKustomization('staging', '1.3').replace(
        '  - ../../base\n',
        '  - ../../base\n  - missing.yaml\n',
      ),
      'apps/web/overlays/prod/kustomization.yaml': overlayKustomization('prod', '2.0'),
    });
    const diff = await all.diffReport(first, await all.fetch());
    expect(diff.problems).toEqual([
      expect.objectContaining({
        file: 'apps/web/overlays/staging/kustomization.yaml',
        line: 1,
        message: expect.stringMatching(/^kustomize build apps\/web\/overlays\/staging: .*missing\.yaml/),
      }),
    ]);
    // Nothing of staging changes or is removed; prod's change goes through.
    expect(summary(diff.changes)).toEqual([
      'changed Rollout//prod-web apps/web/overlays/prod/kustomization.yaml',
    ]);
  });

  it("what left Git while the app did not render is reported removed once it renders again (compared with the app's last good render)", async () => {
    const { push, source } = await scene();
    const first = await push(webLayout());
    const staging = source();
    await staging.diffReport(undefined, await staging.fetch());
    const staged = overlayKustomization('staging', '1.1');
    const broken = await push({
      'apps/web/overlays/staging/kustomization.yaml': staged.replace(
        '  - ../../base\n',
        '  - ../../base\n  - missing.yaml\n',
      ),
    });
    const held = await staging.diffReport(first, await staging.fetch());
    expect(held.to).toBe(broken);
    expect(held.changes).toEqual([]);
    expect(held.problems).toHaveLength(1);
    // Fixed, and the Service taken out of the base at the same time.
    await push({
      'apps/web/overlays/staging/kustomization.yaml': staged,
      'apps/web/base/kustomization.yaml': baseKustomization().replace('  - service.yaml\n', ''),
      'apps/web/base/service.yaml': null,
    });
    const fixed = await staging.diffReport(broken, await staging.fetch());
    expect(fixed.problems).toEqual([]);
    expect(summary(fixed.changes)).toEqual([
      'removed Service//staging-web apps/web/overlays/staging/kustomization.yaml',
    ]);
  });

  it('a remote base is a problem naming the kustomization file and line; kustomize is not run', async () => {
    const { push, source } = await scene();
    await push({
      ...webLayout(),
      'apps/web/overlays/staging/kustomization.yaml':
        'resources:\n  - ../../base\n  - https://github.com/example/base//web?ref=v1\nnamePrefix: staging-\n',
    });
    const staging = source();
    const diff = await staging.diffReport(undefined, await staging.fetch());
    expect(diff.changes).toEqual([]);
    expect(diff.problems).toEqual([
      expect.objectContaining({
        file: 'apps/web/overlays/staging/kustomization.yaml',
        line: 3,
        message: expect.stringContaining('https://github.com/example/base//web?ref=v1 is a URL'),
      }),
    ]);
    expect(diff.renders).toEqual({ renders: 0, cacheHits: 0, unchanged: 0 });
  });

  it('a kustomization rendering more than maxOutputBytes fails with a bounded message', async () => {
    const limit = 64 * 1024;
    const { push, source } = await scene({
      ...DEFAULT_RENDER_SETTINGS,
      kustomize: { ...DEFAULT_RENDER_SETTINGS.kustomize, maxOutputBytes: limit },
    });
    const big = 'x'.repeat(200 * 1024);
    await push({
      'apps/big/kustomization.yaml': 'configMapGenerator:\n  - name: big\n    files: [big.txt]\n',
      'apps/big/big.txt': big,
    });
    const bigSource = source({ name: 'big', path: 'apps/big' });
    const diff = await bigSource.diffReport(undefined, await bigSource.fetch());
    expect(diff.changes).toEqual([]);
    expect(diff.problems).toEqual([
      expect.objectContaining({
        file: 'apps/big/kustomization.yaml',
        message: `kustomize build apps/big: kustomize output passed ${limit} bytes and was stopped (render.kustomize.maxOutputBytes)`,
      }),
    ]);
  });

  it('a Helm chart is one problem at its Chart.yaml, and its templates are not read as YAML', async () => {
    const { push, source } = await scene();
    await push({
      'charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
      'charts/web/templates/deployment.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n',
      'charts/plain.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: beside}\n',
    });
    const charts = source({ name: 'charts', path: 'charts' });
    const diff = await charts.diffReport(undefined, await charts.fetch());
    expect(summary(diff.changes)).toEqual(['added ConfigMap//beside charts/plain.yaml']);
    expect(diff.problems).toEqual([
      expect.objectContaining({
        file: 'charts/web/Chart.yaml',
        line: 1,
        message: expect.stringContaining('Rollgate does not render Helm'),
      }),
    ]);
  });
});

describe('an app that leaves its folder', () => {
  it("a chart deleted, or a Chart.yaml taken out of an overlay: its Chart.yaml is looked at again, so the chart's problem does not stand", async () => {
    const { push, source } = await scene();
    const chart = { 'apps/chart/Chart.yaml': 'apiVersion: v2\nname: chart\nversion: 0.1.0\n' };
    const first = await push({ ...webLayout(), ...chart });
    const all = source({ path: 'apps' });
    const firstDiff = await all.diffReport(undefined, await all.fetch());
    expect(firstDiff.problems.map((problem) => problem.file)).toEqual(['apps/chart/Chart.yaml']);

    const gone = await push({ 'apps/chart/Chart.yaml': null });
    const goneDiff = await all.diffReport(first, await all.fetch());
    expect(goneDiff.problems).toEqual([]);
    expect(goneDiff.files.map((file) => file.path)).toContain('apps/chart/Chart.yaml');

    const inStaging = await push({ 'apps/web/overlays/staging/Chart.yaml': chart['apps/chart/Chart.yaml'] });
    const inDiff = await all.diffReport(gone, await all.fetch());
    expect(inDiff.problems.map((problem) => problem.file)).toEqual(['apps/web/overlays/staging/Chart.yaml']);
    expect(inDiff.changes).toEqual([]);

    await push({ 'apps/web/overlays/staging/Chart.yaml': null });
    const outDiff = await all.diffReport(inStaging, await all.fetch());
    expect(outDiff.problems).toEqual([]);
    expect(outDiff.files.map((file) => file.path)).toContain('apps/web/overlays/staging/Chart.yaml');
  });
});
