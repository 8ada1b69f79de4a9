// A Git source with kustomizations (real kubectl kustomize, real git http-backend): what a diff renders, and what it holds.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ManifestChange } from '../../../src/git/manifest-diff.ts';
import { serveGitRepositories } from '../../../src/git/smart-http-server.ts';
import { GitSource } from '../../../src/git/source.ts';
import type { Source } from '../../../src/git/source.ts';
import { DEFAULT_RENDER_SETTINGS, Rendering } from '../../../src/render/rendering.ts';
import type { RenderSettings } from '../../../src/render/rendering.ts';
import { createBareRepository, makeTempDir, WorkingCopy } from '../../support/git-fixtures.ts';
import { overlayKustomization, webLayout } from '../../support/kustomize-layout.ts';

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
  const rendering = await Rendering.start(settings);
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
