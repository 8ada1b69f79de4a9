// Everything a kustomization reads, found from the kustomization files (not by rendering), and the input key that names it.
import { createHash } from 'node:crypto';
import type { AppInputs, RenderInput } from '../app-inputs.ts';
import type { RenderProblem } from '../render-problem.ts';
import type { RepositoryReader } from '../repository-reader.ts';
import { lookUp } from '../repository-reader.ts';
import type { KustomizationCache } from './kustomization-cache.ts';
import { preflightReference } from './kustomization-preflight.ts';

/**
 * Follows every path the kustomization in `dir` names, and those of every kustomization it reaches,
 * resolved against the repository's root tree (an overlay may use `../../base`). Each directory is read
 * once; a cycle ends where it closes (kustomize reports it). `renderer` names the renderer and its
 * version, part of the key. Undefined when `dir` holds no kustomization.
 */
export async function collectKustomizeInputs(
  reader: RepositoryReader,
  rootTree: string,
  dir: string,
  cache: KustomizationCache,
  renderer: string,
): Promise<AppInputs | undefined> {
  const root = await lookUp(reader, rootTree, dir);
  if (root.type !== 'tree') return undefined;
  const app = await cache.get(reader, dir, root.oid);
  if (app === undefined) return undefined;
  const inputs = new Map<string, RenderInput>();
  const problems: RenderProblem[] = [];
  const visited = new Set<string>();
  const add = (input: RenderInput): void => {
    if (!inputs.has(input.path)) inputs.set(input.path, input);
  };

  const visit = async (at: string, treeOid: string): Promise<void> => {
    if (visited.has(at)) return;
    visited.add(at);
    const kustomization = await cache.get(reader, at, treeOid);
    if (kustomization === undefined) {
      add({ path: at, type: 'tree', oid: treeOid });
      return;
    }
    for (const file of kustomization.files) add({ path: file.path, type: 'kustomization', oid: file.oid });
    problems.push(...kustomization.read.problems);
    for (const reference of kustomization.read.references) {
      const checked = preflightReference(kustomization.file, at, reference);
      if ('problem' in checked) {
        problems.push(checked.problem);
        continue;
      }
      const target = await lookUp(reader, rootTree, checked.path);
      if (target.type === 'tree') {
        if (reference.kind === 'entry') await visit(checked.path, target.oid);
        else add({ path: checked.path, type: 'tree', oid: target.oid });
      } else if (target.type === 'blob') add({ path: checked.path, type: 'file', oid: target.oid });
      else add({ path: checked.path, type: target.type, oid: target.type === 'skipped' ? target.oid : '' });
    }
  };
  await visit(dir, root.oid);
  const sorted = [...inputs.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    kind: 'kustomize',
    dir,
    file: app.file,
    inputs: sorted,
    problems,
    key: inputKey(dir, sorted, renderer),
  };
}

/**
 * The app's input key: a digest of every (path, type, object id) it reads and of what else decides the
 * output (the renderer and its version, the references Rollgate adds). Equal keys render equal output.
 */
export function inputKey(dir: string, inputs: readonly RenderInput[], renderer: string): string {
  const hash = createHash('sha256').update(`${renderer}\n${dir}\n`);
  for (const input of inputs) hash.update(`${input.path}\0${input.type}\0${input.oid}\n`);
  return hash.digest('hex');
}
