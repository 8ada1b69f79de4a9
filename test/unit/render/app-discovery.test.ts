// Which apps a commit holds under a source's path, and input keys that change only when an app's own inputs do.
import { describe, expect, it } from 'vitest';
import { discoverApps, MarkerIndex, type RenderMode } from '../../../src/render/app-discovery.ts';
import { KustomizationCache } from '../../../src/render/kustomize/kustomization-cache.ts';
import { collectKustomizeInputs } from '../../../src/render/kustomize/kustomize-inputs.ts';
import { memoryRepository } from '../../builders/memory-repository.ts';

const LAYOUT: Record<string, string> = {
  'apps/web/base/kustomization.yaml': 'resources: [rollout.yaml]\n',
  'apps/web/base/rollout.yaml': 'kind: Rollout\n',
  'apps/web/overlays/staging/kustomization.yaml': 'resources: [../../base]\npatches:\n  - path: patch.yaml\n',
  'apps/web/overlays/staging/patch.yaml': 'kind: Rollout\n',
  'apps/web/overlays/prod/kustomization.yaml': 'resources: [../../base]\nnamePrefix: prod-\n',
  'apps/web/plain.yaml': 'kind: ConfigMap\n',
  'apps/api/kustomization.yml': 'resources: [deploy.yaml]\n',
  'apps/api/deploy.yaml': 'kind: Deployment\n',
};

async function appsAt(files: Record<string, string>, path: string, mode: RenderMode = 'auto') {
  const repo = memoryRepository(files);
  const found = await discoverApps(
    repo.reader,
    repo.root,
    path,
    mode,
    new MarkerIndex(),
    new KustomizationCache(),
  );
  return {
    apps: found.apps.map((app) => `${app.kind} ${app.dir}`).sort(),
    covered: [...found.covered].sort(),
    problems: found.problems,
  };
}

describe('discoverApps', () => {
  it('a source on an overlay: the overlay is the only app, all of its folder is covered', async () => {
    expect(await appsAt(LAYOUT, 'apps/web/overlays/staging')).toEqual({
      apps: ['kustomize apps/web/overlays/staging'],
      covered: ['apps/web/overlays/staging'],
      problems: [],
    });
  });

  it("an app's root holding base and overlays: each overlay is an app, the base (included) is not; other YAML stays plain", async () => {
    expect(await appsAt(LAYOUT, 'apps/web')).toEqual({
      apps: ['kustomize apps/web/overlays/prod', 'kustomize apps/web/overlays/staging'],
      covered: ['apps/web/base', 'apps/web/overlays/prod', 'apps/web/overlays/staging'],
      problems: [],
    });
  });

  it('a source holding several apps finds each root, whatever kustomization file name it uses', async () => {
    expect((await appsAt(LAYOUT, '')).apps).toEqual([
      'kustomize apps/api',
      'kustomize apps/web/overlays/prod',
      'kustomize apps/web/overlays/staging',
    ]);
  });

  it('a kustomization at the source path is the only app, even with kustomizations below it', async () => {
    const files = { ...LAYOUT, 'apps/kustomization.yaml': 'resources: [api]\n' };
    expect(await appsAt(files, 'apps')).toEqual({
      apps: ['kustomize apps'],
      covered: ['apps'],
      problems: [],
    });
  });

  it('a Helm chart is an app of its own kind (refused later); its folder is covered and not looked into', async () => {
    const files = {
      'charts/web/Chart.yaml': 'name: web\n',
      'charts/web/templates/kustomization.yaml': 'resources: []\n',
      'charts/web/templates/deploy.yaml': 'name: {{ .Release.Name }}\n',
      'charts/plain.yaml': 'kind: ConfigMap\n',
    };
    expect(await appsAt(files, 'charts')).toEqual({
      apps: ['helm charts/web'],
      covered: ['charts/web'],
      problems: [],
    });
  });

  it('plain: no app; kustomize: the path must hold a kustomization', async () => {
    expect(await appsAt(LAYOUT, 'apps/web', 'plain')).toEqual({ apps: [], covered: [], problems: [] });
    expect(await appsAt(LAYOUT, 'apps/web/overlays/prod', 'kustomize')).toMatchObject({
      apps: ['kustomize apps/web/overlays/prod'],
    });
    expect(await appsAt(LAYOUT, 'apps/web', 'kustomize')).toEqual({
      apps: [],
      covered: ['apps/web'],
      problems: [
        {
          file: 'apps/web/kustomization.yaml',
          line: 1,
          message:
            'render: kustomize, but apps/web holds no kustomization (kustomization.yaml, kustomization.yml, Kustomization)',
        },
      ],
    });
  });

  it("a commit's walk opens only the trees that changed since the last walk", async () => {
    const markers = new MarkerIndex();
    const kustomizations = new KustomizationCache();
    const many: Record<string, string> = {};
    for (let i = 0; i < 50; i += 1) many[`apps/app-${i}/kustomization.yaml`] = `resources: [r${i}.yaml]\n`;
    const before = memoryRepository(many);
    await discoverApps(before.reader, before.root, '', 'auto', markers, kustomizations);
    const after = memoryRepository({
      ...many,
      'apps/app-7/kustomization.yaml': 'resources: [changed.yaml]\n',
    });
    const found = await discoverApps(after.reader, after.root, '', 'auto', markers, kustomizations);
    expect(found.apps).toHaveLength(50);
    // The root, apps/ and apps/app-7 (markers), app-7 again (its kustomization): not 50 apps' trees.
    expect(after.treeReads()).toBeLessThanOrEqual(5);
  });
});

describe('input keys', () => {
  const keyOf = async (files: Record<string, string>, dir: string) => {
    const repo = memoryRepository(files);
    const app = await collectKustomizeInputs(
      repo.reader,
      repo.root,
      dir,
      new KustomizationCache(),
      'kustomize v5',
    );
    return app?.key;
  };

  it('lists what the app reads: its kustomizations, the base, the patch; nothing else', async () => {
    const repo = memoryRepository(LAYOUT);
    const app = await collectKustomizeInputs(
      repo.reader,
      repo.root,
      'apps/web/overlays/staging',
      new KustomizationCache(),
      'kustomize v5',
    );
    expect(app?.file).toBe('apps/web/overlays/staging/kustomization.yaml');
    expect(app?.inputs.map((input) => `${input.type} ${input.path}`)).toEqual([
      'kustomization apps/web/base/kustomization.yaml',
      'file apps/web/base/rollout.yaml',
      'kustomization apps/web/overlays/staging/kustomization.yaml',
      'file apps/web/overlays/staging/patch.yaml',
    ]);
  });

  it('a change to a sibling app, or to an unused file beside the overlay, leaves the key as it was', async () => {
    const key = await keyOf(LAYOUT, 'apps/web/overlays/staging');
    const prodChanged = {
      ...LAYOUT,
      'apps/web/overlays/prod/kustomization.yaml': 'resources: [../../base]\n',
    };
    expect(await keyOf(prodChanged, 'apps/web/overlays/staging')).toBe(key);
    const unused = { ...LAYOUT, 'apps/web/overlays/staging/README.md': 'notes\n' };
    expect(await keyOf(unused, 'apps/web/overlays/staging')).toBe(key);
  });

  it('a change to the base changes the key of every overlay using it; the renderer version changes every key', async () => {
    const base = { ...LAYOUT, 'apps/web/base/rollout.yaml': 'kind: Rollout\nspec: {}\n' };
    for (const overlay of ['apps/web/overlays/staging', 'apps/web/overlays/prod'])
      expect(await keyOf(base, overlay)).not.toBe(await keyOf(LAYOUT, overlay));
    expect(await keyOf(LAYOUT, 'apps/api')).toBe(await keyOf(base, 'apps/api'));
    const repo = memoryRepository(LAYOUT);
    const other = await collectKustomizeInputs(
      repo.reader,
      repo.root,
      'apps/api',
      new KustomizationCache(),
      'kustomize v6',
    );
    expect(other?.key).not.toBe(await keyOf(LAYOUT, 'apps/api'));
  });

  it('a missing file and a symlink are inputs that are not written (kustomize reports them absent)', async () => {
    const repo = memoryRepository({
      'app/kustomization.yaml': 'resources: [gone.yaml, link.yaml]\n',
      'app/link.yaml': 'symlink:../secret',
    });
    const app = await collectKustomizeInputs(repo.reader, repo.root, 'app', new KustomizationCache(), 'v');
    expect(app?.inputs.map((input) => `${input.type} ${input.path}`)).toEqual([
      'missing app/gone.yaml',
      'kustomization app/kustomization.yaml',
      'skipped app/link.yaml',
    ]);
  });
});
