// Finds the promoted Rollout in the `from` source's files at a commit, as Git holds it: its pod template and images.
import { specManifestParser, type SourceManifest } from '../git/manifest-parser.ts';
import { imagesOfTemplate, type GitRollout } from '../promotion/git-rollout.ts';
import { podTemplateHash } from '../rollout/index.ts';
import { declaredRolloutSchema } from '../manifest/rollout.ts';

/** The `from` source at the tip of its branch: the commit and every manifest file under its path. */
export interface PromotionSourceRead {
  tip: string;
  files: ReadonlyArray<{ path: string; text: string }>;
  /**
   * The source's objects as its sync reads them, kustomize apps rendered: when given, they are what Git
   * holds (a Rollout of an overlay is in no file of the path), and `files` is not parsed.
   */
  objects?: readonly SourceManifest[];
}

/** Which Rollout to find: the live one's namespace and name, and the namespace Git's objects without one get. */
export interface GitRolloutQuery {
  namespace: string;
  name: string;
  /** The source's `namespace`: a manifest without `metadata.namespace` is applied there. */
  defaultNamespace?: string;
  /** The live status' collision count, so Git's template hashes as the reconciler hashed the live one. */
  collisionCount?: number;
}

const ROLLOUT_API_VERSIONS = new Set(['argoproj.io/v1alpha1', 'rollgate.dev/v1alpha1']);

function inNamespace(object: SourceManifest, query: GitRolloutQuery): boolean {
  const namespace = object.namespace ?? query.defaultNamespace;
  // Without a namespace in the manifest or the source, the object goes wherever the process defaults to.
  return namespace === undefined || namespace === query.namespace;
}

/**
 * The Rollout `query` names in `read`'s files, with its pod template: inline, or the `apps/v1` Deployment
 * its `workloadRef` names in the same files. Missing (with why) when there is none, two, or one that does
 * not parse: the promotion then proposes nothing.
 */
export function gitRolloutOf(read: PromotionSourceRead, query: GitRolloutQuery): GitRollout {
  const objects =
    read.objects ?? read.files.flatMap((file) => specManifestParser.parse(file.path, file.text).objects);
  const missing = (reason: string): GitRollout => ({ found: false, commit: read.tip, reason });
  const rollouts = objects.filter(
    (o) =>
      o.kind === 'Rollout' &&
      ROLLOUT_API_VERSIONS.has(o.apiVersion) &&
      o.name === query.name &&
      inNamespace(o, query),
  );
  if (rollouts.length === 0) return missing(`no Rollout ${query.name} under the source's path`);
  if (rollouts.length > 1) return missing(`${rollouts.length} Rollouts named ${query.name}`);
  const parsed = declaredRolloutSchema.safeParse(rollouts[0]?.object);
  if (!parsed.success) return missing(`the Rollout ${query.name} does not validate`);
  const { spec } = parsed.data;
  let template: unknown = spec.template;
  if (spec.workloadRef !== undefined) {
    const ref = spec.workloadRef;
    const deployments = objects.filter(
      (o) =>
        o.kind === 'Deployment' && o.apiVersion === 'apps/v1' && o.name === ref.name && inNamespace(o, query),
    );
    if (deployments.length !== 1)
      return missing(
        `${deployments.length === 0 ? 'no' : deployments.length} Deployment ${ref.name} (its workloadRef)`,
      );
    template = (deployments[0]?.object.spec as { template?: unknown } | undefined)?.template;
  }
  if (template === null || typeof template !== 'object')
    return missing(`the Rollout ${query.name} has no pod template`);
  return {
    found: true,
    commit: read.tip,
    images: imagesOfTemplate(template),
    podTemplateHash: podTemplateHash(template, query.collisionCount),
  };
}
