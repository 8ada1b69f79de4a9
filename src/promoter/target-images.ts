// The images a target Rollout has in Git before a release, for the pull request's "before → after" (best effort).
import { specManifestParser } from '../git/manifest-parser.ts';
import { imagesOfTemplate, type ContainerImage } from '../promotion/git-rollout.ts';

/**
 * The images of the Rollout `name`'s inline template in the target's files; undefined when there is not
 * exactly one, or its images come from elsewhere (a kustomization, a `workloadRef`): the body then names
 * only the new images.
 */
export function imagesOfWorkload(
  files: ReadonlyArray<{ path: string; text: string }>,
  name: string,
): ContainerImage[] | undefined {
  const found = files
    .flatMap((file) => specManifestParser.parse(file.path, file.text).objects)
    .filter((object) => object.kind === 'Rollout' && object.name === name);
  if (found.length !== 1) return undefined;
  const template = (found[0]?.object.spec as { template?: unknown } | undefined)?.template;
  const images = imagesOfTemplate(template);
  return images.length === 0 ? undefined : images;
}
