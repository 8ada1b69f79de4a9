// The target's edits for one look: the promotion's files copied from the `from` commit, then the images written over them.
import { isManifestPath } from '../git/tree-diff.ts';
import type { FileEditPlan, FileMove, TreeFile } from '../promotion/plan-file-edits.ts';
import { planFileEdits } from '../promotion/plan-file-edits.ts';
import { FileMoveError } from '../promotion/file-move-error.ts';
import type { ContainerImage } from '../promotion/git-rollout.ts';
import type { PromotionFile } from '../promotion/promotion-action.ts';
import type { PromotedFiles } from '../promotion/plan-promotion.ts';

/** Reads files (any kind) at or under paths relative to a source's path, at a commit already fetched. */
export type FilesReader = (
  commit: string,
  paths: readonly string[],
) => Promise<Array<{ path: string; bytes: Uint8Array }>>;

/** What the edge hands the planners: the files to write and delete, and the files' part for the text and marker. */
export interface TargetEdits {
  files: PromotionFile[];
  deletions: string[];
  promoted?: PromotedFiles;
}

/**
 * Whole files are copied as their bytes: UTF-8 decoded keeping a byte-order mark, so writing the text back
 * gives the same bytes. Anything that is not UTF-8 is refused, since the branch writer writes text.
 */
function asText(files: ReadonlyArray<{ path: string; bytes: Uint8Array }>): TreeFile[] {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  return files.map((file) => {
    try {
      return { path: file.path, text: decoder.decode(file.bytes) };
    } catch {
      throw new FileMoveError(
        'promotion.binary_file',
        `"${file.path}" is not UTF-8 text; only text files are promoted`,
        {
          path: file.path,
        },
      );
    }
  });
}

/**
 * Plans the target's edits: the moves (read from the `from` source at `fromCommit` and the target at
 * `targetTip`), then each workload's images written into the target as it will be with the moves applied
 * (an image edit of a copied file applies to the copy). Only files that change are returned.
 */
export async function targetEditsOf(input: {
  moves: readonly FileMove[];
  fromCommit: string;
  readFrom: FilesReader;
  target: { tip: string; files: readonly PromotionFile[]; root: string };
  readTarget: FilesReader;
  images: ReadonlyArray<{ name: string; images: ContainerImage[] }>;
  editImages: (
    files: readonly PromotionFile[],
    target: { kind: 'Rollout'; name: string },
    images: readonly ContainerImage[],
  ) => PromotionFile[];
}): Promise<TargetEdits> {
  let plan: FileEditPlan | undefined;
  if (input.moves.length > 0) {
    const from = asText(
      await input.readFrom(
        input.fromCommit,
        input.moves.map((m) => m.from),
      ),
    );
    const to = asText(
      await input.readTarget(
        input.target.tip,
        input.moves.map((m) => m.to),
      ),
    );
    plan = planFileEdits({ moves: input.moves, from, to, toRoot: input.target.root });
  }
  const written = new Map((plan?.files ?? []).map((file) => [file.path, file.text]));
  const deleted = new Set(plan?.deletions ?? []);
  let tree: PromotionFile[] = [
    ...input.target.files
      .filter((file) => !deleted.has(file.path) && !written.has(file.path))
      .map((file) => ({ path: file.path, text: file.text })),
    // Only what the image edit reads as manifests (a copied `.properties` file is no YAML to parse).
    ...[...written].filter(([path]) => isManifestPath(path)).map(([path, text]) => ({ path, text })),
  ];
  for (const workload of input.images) {
    const edited = input.editImages(tree, { kind: 'Rollout', name: workload.name }, workload.images);
    for (const file of edited) written.set(file.path, file.text);
    const byPath = new Map(edited.map((file) => [file.path, file.text]));
    tree = tree.map((file) => ({ path: file.path, text: byPath.get(file.path) ?? file.text }));
  }
  const before = new Map(input.target.files.map((file) => [file.path, file.text]));
  return {
    // A file whose image edit undid a copy's change (equal to the target again) is left out.
    files: [...written]
      .filter(([path, text]) => before.get(path) !== text)
      .map(([path, text]) => ({ path, text })),
    deletions: [...deleted],
    ...(plan !== undefined ? { promoted: { edits: plan.edits, digest: plan.digest } } : {}),
  };
}
