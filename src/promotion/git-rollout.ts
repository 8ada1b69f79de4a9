// Whether the revision that finished its canary is the one Git holds: a promotion proposes only what Git wrote.

/** A container's image, by container name. */
export interface ContainerImage {
  container: string;
  image: string;
}

/**
 * The Rollout being promoted as the `from` source's Git holds it, read by the edge at the branch tip it
 * fetched for the look: found with its pod template (or the referenced Deployment's, for a `workloadRef`),
 * or missing with why.
 */
export type GitRollout =
  | {
      found: true;
      /** The commit read. */
      commit: string;
      /** Container and init-container images of Git's pod template. */
      images: ContainerImage[];
      /** Git's pod template hashed as the reconciler hashes the live one (same collision count). */
      podTemplateHash: string;
    }
  | { found: false; commit: string; reason: string };

/** The live side of the comparison: what the cluster holds for the Rollout. */
export interface LiveTemplate {
  namespace: string;
  name: string;
  /** Images of the live pod template (resolved through `workloadRef` when it has one). */
  images: ContainerImage[];
  /**
   * The revision the live pod template is, as the reconciler names it: its hash (with the status'
   * collision count), or the hash of the ReplicaSet that runs it under another (adopted from Argo Rollouts).
   */
  templateHash?: string;
  /** The live pod template hashed as Git's is (differs from `templateHash` only for an adopted revision). */
  specHash?: string;
  /** The template comes from a Deployment the Rollout references. */
  workloadRef?: boolean;
}

/** The verdict: the images Git wrote and the commit that says so, or why the revision is refused. */
export type GitMatch =
  { matches: true; commit: string; images: ContainerImage[] } | { matches: false; reason: string };

/** The images of a pod template (`spec.containers` then `spec.initContainers`), those with a name and an image. */
export function imagesOfTemplate(template: unknown): ContainerImage[] {
  const spec = (template as { spec?: unknown } | undefined)?.spec as
    { containers?: unknown; initContainers?: unknown } | undefined;
  const listed = [spec?.containers, spec?.initContainers].flatMap((list) =>
    Array.isArray(list) ? list : [],
  );
  return listed
    .filter(
      (c): c is { name: string; image: string } =>
        typeof (c as { name?: unknown }).name === 'string' &&
        typeof (c as { image?: unknown }).image === 'string',
    )
    .map((c) => ({ container: c.name, image: c.image }));
}

function sameImages(a: readonly ContainerImage[], b: readonly ContainerImage[]): boolean {
  const key = (list: readonly ContainerImage[]) =>
    JSON.stringify(
      list.map((i) => [i.container, i.image]).sort(([x = ''], [y = '']) => (x < y ? -1 : x > y ? 1 : 0)),
    );
  return key(a) === key(b);
}

function describeImages(list: readonly ContainerImage[]): string {
  return list.length === 0 ? 'no image' : list.map((i) => `${i.container}=${i.image}`).join(', ');
}

/**
 * The revision `hash` was adopted under another controller's hash (Argo Rollouts'): it is the live
 * template, and the live template hashes as Git's.
 */
function adoptedAsGit(live: LiveTemplate, hash: string, gitHash: string): boolean {
  return live.templateHash === hash && live.specHash !== undefined && live.specHash === gitHash;
}

/**
 * Compares the revision `hash` that finished its canary with what Git holds. An inline template must hash
 * exactly like Git's (the reconciler's own revision rule), so a template changed in the cluster (`kubectl
 * edit`) is refused whatever it changed. A `workloadRef` template is read from a Deployment the API server
 * fills defaults into, so it cannot hash like Git's: there the live template must still be the revision that
 * finished, and its images must be Git's, container by container.
 */
export function matchGit(live: LiveTemplate, hash: string, git: GitRollout | undefined): GitMatch {
  const key = `${live.namespace}/${live.name}`;
  if (git === undefined) return { matches: false, reason: `the manifest of ${key} in Git was not read` };
  const at = git.commit.slice(0, 12);
  if (!git.found)
    return { matches: false, reason: `Git has no usable manifest of ${key} at ${at}: ${git.reason}` };
  const refused = (what: string): GitMatch => ({
    matches: false,
    reason: `revision ${hash} of ${key} is not what Git holds at ${at} (${what}): changed in the cluster, or Git moved on and is not synced yet; not promoted`,
  });
  if (live.workloadRef === true) {
    if (live.templateHash !== hash) return refused('its Deployment changed since the canary finished');
    if (!sameImages(live.images, git.images))
      return refused(
        `the cluster runs ${describeImages(live.images)}, Git has ${describeImages(git.images)}`,
      );
  } else if (git.podTemplateHash !== hash && !adoptedAsGit(live, hash, git.podTemplateHash)) {
    return refused(
      sameImages(live.images, git.images)
        ? `Git's template is revision ${git.podTemplateHash}`
        : `the cluster runs ${describeImages(live.images)}, Git has ${describeImages(git.images)}`,
    );
  }
  return { matches: true, commit: git.commit, images: git.images };
}
