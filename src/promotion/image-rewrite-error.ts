// Why a promotion could not write the new images into the target's files: a stable code and where it looked.

/** Stable codes of image rewrite failures (compare codes, not classes, across process boundaries). */
export type ImageRewriteErrorCode =
  /** No Rollout/Deployment of that kind, name (and namespace) in the target path, nor a kustomization for it. */
  | 'promotion.target_not_found'
  /** Two objects (or two kustomization entries) match, and Rollgate will not guess which one is meant. */
  | 'promotion.target_ambiguous'
  /** The target object has no container (or init container) of that name. */
  | 'promotion.container_not_found'
  /** The image value, or a node holding it, is a YAML alias or anchor (or comes from a merge key). */
  | 'promotion.image_is_alias'
  /** The container has no `image` to change. */
  | 'promotion.image_missing'
  /** The YAML is valid but written in a shape this rewrite does not edit (e.g. a block scalar image). */
  | 'promotion.unsupported_yaml'
  /** The file is not valid YAML. */
  | 'promotion.invalid_yaml'
  /** An image handed to the rewrite is not a single image reference. */
  | 'promotion.invalid_image';

/** Where the failure was found; `line` is 1-based. */
export interface ImageRewriteContext {
  file?: string;
  line?: number;
  /** Field path in the object, e.g. `spec.template.spec.containers[1].image` or `images[0]`. */
  field?: string;
  /** `Kind/namespace/name` or `Kind/name`. */
  target?: string;
  container?: string;
}

/**
 * A rewrite that cannot be done without a human: the files are left as they are. Never transient (the
 * same files give the same answer), so a promotion that hits it stops until Git changes.
 */
export class ImageRewriteError extends Error {
  override readonly name = 'ImageRewriteError';
  readonly transient = false;

  constructor(
    readonly code: ImageRewriteErrorCode,
    message: string,
    readonly context: ImageRewriteContext = {},
  ) {
    super(`${ImageRewriteError.where(context)}${message}`);
  }

  private static where(context: ImageRewriteContext): string {
    const place =
      context.file === undefined
        ? ''
        : context.line === undefined
          ? context.file
          : `${context.file}:${context.line}`;
    const parts = [place, context.field].filter((part) => part !== undefined && part !== '');
    return parts.length === 0 ? '' : `${parts.join(' ')}: `;
  }
}
