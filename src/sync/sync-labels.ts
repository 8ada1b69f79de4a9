// The labels and annotations Rollgate puts on every object it applies from Git.

/** Marks an object as applied by Rollgate: only objects with it are ever pruned. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'rollgate';
/** The source (by configured name) an object came from; prune and drift look only at their own source. */
export const SOURCE_LABEL = 'rollgate.dev/source';
export { COMMIT_ANNOTATION, COMMIT_AUTHOR_ANNOTATION } from '../manifest/commit-annotations.ts';
/** The file (repository path) it is defined in, so an error or event can point at it. */
export const FILE_ANNOTATION = 'rollgate.dev/file';
/**
 * On an object Git names only by generateName: the digest of the document it was created from (see
 * manifestDigest in src/git). A sync creates such an object only when no object of its source carries
 * the digest, so a retried sync, a re-diff or a move to another file does not create a second one.
 */
export const MANIFEST_DIGEST_LABEL = 'rollgate.dev/manifest-digest';
/**
 * On a live object no source owns: `rollgate.dev/adopt: <source>` lets that one source take it over
 * (label it as its own, apply over it, prune it later) without `adopt: unowned` for the whole source.
 */
export const ADOPT_ANNOTATION = 'rollgate.dev/adopt';
/**
 * On a ConfigMap or Secret an aborted revision's revert put back to its parent commit's content: the
 * commit whose content it holds back. While the source's synced commit is still that one, a drift check
 * does not re-apply Git's (the aborted) content; the next sync of the object drops the annotation (the
 * same field manager applies without it).
 */
export const RESTORED_FOR_ANNOTATION = 'rollgate.dev/restored-for-commit';
