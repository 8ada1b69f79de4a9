// Writes an app's inputs, and only those, from Git objects into a fresh folder laid out as the repository is.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { RenderInput } from '../app-inputs.ts';
import type { RepositoryReader } from '../repository-reader.ts';
import {
  ROLLOUT_REFERENCES_FILE_NAME,
  rolloutReferencesConfiguration,
  withRolloutReferences,
} from './rollout-references.ts';

/**
 * Creates a fresh folder (under the system's temporary folder) holding `inputs` at their repository
 * paths: files from their blobs; every kustomization passed through {@link withRolloutReferences}, with
 * the Rollout references file beside it; empty directories for `tree` inputs. Nothing else is written,
 * never a symlink (a Git symlink or submodule is an absent file to kustomize). Returns the folder; the
 * caller removes it ({@link removeMaterialized}), whatever happens.
 */
export async function materializeInputs(
  reader: RepositoryReader,
  inputs: readonly RenderInput[],
  parent = tmpdir(),
): Promise<string> {
  const root = await mkdtemp(join(parent, 'rollgate-render-'));
  try {
    const decoder = new TextDecoder('utf-8');
    for (const input of inputs) {
      // Repository paths are normalized (no `..`, no leading `/`) by the input collection.
      const target = join(root, input.path);
      if (input.type === 'tree') await mkdir(target, { recursive: true });
      if (input.type !== 'file' && input.type !== 'kustomization') continue;
      await mkdir(dirname(target), { recursive: true });
      const blob = await reader.readBlob(input.oid);
      if (input.type === 'file') {
        await writeFile(target, blob, { flag: 'wx' });
        continue;
      }
      await writeFile(target, withRolloutReferences(decoder.decode(blob)), { flag: 'wx' });
      await writeFile(join(dirname(target), ROLLOUT_REFERENCES_FILE_NAME), rolloutReferencesConfiguration(), {
        flag: 'w',
      });
    }
    return root;
  } catch (error) {
    await removeMaterialized(root);
    throw error;
  }
}

/** Removes a folder made by {@link materializeInputs}. */
export async function removeMaterialized(root: string): Promise<void> {
  await rm(root, { recursive: true, force: true });
}
