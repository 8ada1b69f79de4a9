// Container image references split into repository, tag and digest, as kustomize's images list names them.

/** The parts of an image reference: `repository[:tag][@digest]`. */
export interface ImageReference {
  /** Registry (with port) and path, e.g. `ghcr.io/acme/web` or `localhost:5000/web`. */
  repository: string;
  tag?: string;
  /** e.g. `sha256:4f1c…` */
  digest?: string;
}

const WHITESPACE_OR_CONTROL = /[\s\p{Cc}]/u;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Za-z=_-]{16,}$/;

/**
 * Splits an image reference. A colon is a tag separator only after the last slash, so a registry port
 * (`localhost:5000/web`) stays part of the repository.
 */
export function splitImage(image: string): ImageReference {
  const at = image.indexOf('@');
  const named = at === -1 ? image : image.slice(0, at);
  const reference: ImageReference = { repository: named };
  if (at !== -1) reference.digest = image.slice(at + 1);
  const colon = named.lastIndexOf(':');
  if (colon > named.lastIndexOf('/')) {
    reference.repository = named.slice(0, colon);
    reference.tag = named.slice(colon + 1);
  }
  return reference;
}

/** Puts the parts back together. */
export function joinImage(reference: ImageReference): string {
  let image = reference.repository;
  if (reference.tag !== undefined) image += `:${reference.tag}`;
  if (reference.digest !== undefined) image += `@${reference.digest}`;
  return image;
}

/**
 * Why `image` cannot be written into a manifest, or undefined when it can: it must be one token (no
 * whitespace or control characters) with a repository, and a digest, when present, must look like one.
 */
export function imageProblem(image: string): string | undefined {
  if (image.length === 0) return 'the image is empty';
  if (WHITESPACE_OR_CONTROL.test(image)) return 'the image contains whitespace or control characters';
  if (image.indexOf('@') !== image.lastIndexOf('@')) return 'the image has more than one @';
  const reference = splitImage(image);
  if (reference.repository.length === 0) return 'the image has no repository';
  if (reference.tag !== undefined && reference.tag.length === 0) return 'the image has an empty tag';
  if (reference.digest !== undefined && !DIGEST.test(reference.digest)) {
    return 'the digest is not algorithm:hex (e.g. sha256:…)';
  }
  return undefined;
}
