// `rollgate validate DIR` reads the folder through directoryReader: each folder listed once per run, whatever
// the number of files a render resolves, and entries typed as a Git tree would type them.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { DIRECTORY_ROOT, directoryReader, type ListFolder } from '../../../src/render/directory-reader.ts';
import { discoverApps, MarkerIndex } from '../../../src/render/app-discovery.ts';
import { KustomizationCache } from '../../../src/render/kustomize/kustomization-cache.ts';
import { collectKustomizeInputs } from '../../../src/render/kustomize/kustomize-inputs.ts';
import { lookUp } from '../../../src/render/repository-reader.ts';
import { makeTempDir, type TempDir } from '../../support/git-fixtures.ts';

const cleanups: TempDir[] = [];
afterEach(() => {
  for (const dir of cleanups.splice(0)) dir.remove();
});

function folder(files: Record<string, string>): string {
  const dir = makeTempDir('rollgate-directory-reader-');
  cleanups.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir.path, path)), { recursive: true });
    writeFileSync(join(dir.path, path), text);
  }
  return dir.path;
}

/** node:fs's listing, counted per folder (relative to `root`, `.` for the root). */
function countingList(root: string): { list: ListFolder; listings: Map<string, number> } {
  const listings = new Map<string, number>();
  return {
    listings,
    list: async (path) => {
      const at = relative(root, path) || '.';
      listings.set(at, (listings.get(at) ?? 0) + 1);
      return readdir(path, { withFileTypes: true });
    },
  };
}

describe('directoryReader', () => {
  it('lists each folder once however many paths a render looks up through it', async () => {
    // A checkout with many files at its top (build output, editor files) beside a kustomize layout.
    const files: Record<string, string> = {
      'apps/web/base/kustomization.yaml':
        'resources: [rollout.yaml, service.yaml]\nconfigMapGenerator:\n  - name: web\n    envs: [web.env]\n',
      'apps/web/base/rollout.yaml': 'kind: Rollout\n',
      'apps/web/base/service.yaml': 'kind: Service\n',
      'apps/web/base/web.env': 'A=1\n',
      'apps/web/overlays/prod/kustomization.yaml':
        'resources: [../../base]\npatches:\n  - path: replicas.yaml\n  - path: resources.yaml\n',
      'apps/web/overlays/prod/replicas.yaml': 'kind: Rollout\n',
      'apps/web/overlays/prod/resources.yaml': 'kind: Rollout\n',
    };
    for (let i = 0; i < 500; i += 1) files[`build-${String(i).padStart(3, '0')}.log`] = 'x\n';
    const root = folder(files);
    const { list, listings } = countingList(root);
    const reader = directoryReader(root, list);

    const kustomizations = new KustomizationCache();
    const found = await discoverApps(
      reader,
      DIRECTORY_ROOT,
      'apps',
      'auto',
      new MarkerIndex(),
      kustomizations,
    );
    // The base is the overlay's: one app.
    expect(found.apps.map((app) => app.dir)).toEqual(['apps/web/overlays/prod']);
    const prod = await collectKustomizeInputs(
      reader,
      DIRECTORY_ROOT,
      'apps/web/overlays/prod',
      kustomizations,
      'kustomize v5',
    );
    expect(prod?.problems).toEqual([]);
    expect(prod?.inputs.map((input) => `${input.type} ${input.path}`)).toEqual([
      'kustomization apps/web/base/kustomization.yaml',
      'file apps/web/base/rollout.yaml',
      'file apps/web/base/service.yaml',
      'file apps/web/base/web.env',
      'kustomization apps/web/overlays/prod/kustomization.yaml',
      'file apps/web/overlays/prod/replicas.yaml',
      'file apps/web/overlays/prod/resources.yaml',
    ]);
    // Every lookup above started at the root: before, the root (501 entries, each stat'ed) was listed each time.
    expect([...listings.values()].every((count) => count === 1)).toBe(true);
    expect([...listings.keys()].sort()).toEqual([
      '.',
      'apps',
      'apps/web',
      'apps/web/base',
      'apps/web/overlays',
      'apps/web/overlays/prod',
    ]);
  });

  it('types entries as Git does (a symlink is not followed), in name order, without .git and node_modules', async () => {
    const root = folder({
      'b.yaml': 'kind: ConfigMap\n',
      'a/kustomization.yaml': 'resources: []\n',
      '.git/HEAD': 'ref: refs/heads/main\n',
      'node_modules/x/package.json': '{}\n',
    });
    symlinkSync('b.yaml', join(root, 'link.yaml'));
    symlinkSync('a', join(root, 'linked-folder'));
    const entries = await directoryReader(root).readTree(DIRECTORY_ROOT);
    expect(entries).toEqual([
      { name: 'a', oid: 'a', type: 'tree', mode: '040000' },
      { name: 'b.yaml', oid: 'b.yaml', type: 'blob', mode: '100644' },
      { name: 'link.yaml', oid: 'link.yaml', type: 'blob', mode: '120000' },
      { name: 'linked-folder', oid: 'linked-folder', type: 'blob', mode: '120000' },
    ]);
    expect(await lookUp(directoryReader(root), DIRECTORY_ROOT, 'linked-folder/kustomization.yaml')).toEqual({
      type: 'skipped',
      oid: 'linked-folder',
      why: 'symlink',
    });
  });

  it('does not remember a listing that failed: the folder made afterwards is read', async () => {
    const root = folder({ 'a.yaml': 'kind: ConfigMap\n' });
    const reader = directoryReader(root);
    await expect(reader.readTree('later')).rejects.toMatchObject({ code: 'ENOENT' });
    mkdirSync(join(root, 'later'));
    writeFileSync(join(root, 'later', 'b.yaml'), 'kind: ConfigMap\n');
    expect((await reader.readTree('later')).map((entry) => entry.oid)).toEqual(['later/b.yaml']);
  });
});
