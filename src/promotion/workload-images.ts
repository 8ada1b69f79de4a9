// Rollouts and Deployments in a YAML file: finding one by kind and name, and the edits that set its containers' images.
import { isAlias, isMap, isScalar, isSeq } from 'yaml';
import type { Document, Node, YAMLMap } from 'yaml';
import { ImageRewriteError } from './image-rewrite-error.ts';
import type { ImageRewriteContext } from './image-rewrite-error.ts';
import { hasMergeKey, isFlow, isShared, pairOf, rangeOf, replacementText, stringAt } from './yaml-source.ts';
import type { TextEdit, YamlSource } from './yaml-source.ts';

/** The kinds whose pod template a promotion writes. */
export type WorkloadKind = 'Rollout' | 'Deployment';

/** The object a promotion writes into: its kind, name and (when known) namespace. */
export interface PromotionTarget {
  kind: WorkloadKind;
  name: string;
  /** When given, an object with another namespace does not match; one without a namespace does. */
  namespace?: string;
}

/** One container's new image. */
export interface ImageUpdate {
  container: string;
  image: string;
}

/** One image a rewrite changed. */
export interface ImageChange {
  container: string;
  from: string;
  to: string;
}

/** apiVersions accepted for each kind (Argo's Rollout is accepted as is, like Rollgate's own). */
export const WORKLOAD_API_VERSIONS: Readonly<Record<WorkloadKind, readonly string[]>> = {
  Rollout: ['argoproj.io/v1alpha1', 'rollgate.dev/v1alpha1'],
  Deployment: ['apps/v1'],
};

/** A Rollout or Deployment found in a file. */
export interface WorkloadObject {
  source: YamlSource;
  document: Document.Parsed;
  root: YAMLMap;
  kind: WorkloadKind;
  name: string;
  namespace?: string;
  /** Line of the document's first key. */
  line: number;
}

/** One container (or init container) of a pod template. */
interface ContainerSlot {
  name: string;
  field: string;
  map: YAMLMap;
  /** The container, or a node holding it, is an alias or anchored. */
  shared: boolean;
  inFlow: boolean;
}

/** `Kind/namespace/name`, or `Kind/name` without a namespace. */
export function describeTarget(target: PromotionTarget): string {
  return target.namespace === undefined
    ? `${target.kind}/${target.name}`
    : `${target.kind}/${target.namespace}/${target.name}`;
}

/** Every Rollout/Deployment of the file that matches `target` (kind, apiVersion, name, namespace). */
export function findWorkloads(source: YamlSource, target: PromotionTarget): WorkloadObject[] {
  const found: WorkloadObject[] = [];
  for (const document of source.documents) {
    const root = document.contents;
    if (!isMap(root)) continue;
    const kind = stringAt(root, 'kind');
    if (kind !== target.kind) continue;
    if (!WORKLOAD_API_VERSIONS[target.kind].includes(stringAt(root, 'apiVersion') ?? '')) continue;
    const metadata = pairOf(root, 'metadata')?.value;
    if (!isMap(metadata) || stringAt(metadata, 'name') !== target.name) continue;
    const namespace = stringAt(metadata, 'namespace');
    if (target.namespace !== undefined && namespace !== undefined && namespace !== target.namespace) continue;
    const object: WorkloadObject = {
      source,
      document,
      root,
      kind: target.kind,
      name: target.name,
      line: source.line(rangeOf(root)[0]),
    };
    if (namespace !== undefined) object.namespace = namespace;
    found.push(object);
  }
  return found;
}

/**
 * The Deployment a Rollout's `spec.workloadRef` names when the Rollout has no template of its own, as a
 * target to look for (same namespace as the Rollout); undefined when the Rollout has its own template.
 */
export function workloadRefTarget(object: WorkloadObject): PromotionTarget | undefined {
  if (object.kind !== 'Rollout') return undefined;
  const spec = pairOf(object.root, 'spec')?.value;
  if (!isMap(spec) || pairOf(spec, 'template') !== undefined) return undefined;
  const ref = pairOf(spec, 'workloadRef')?.value;
  if (!isMap(ref)) return undefined;
  const name = stringAt(ref, 'name');
  if (name === undefined || (stringAt(ref, 'kind') ?? 'Deployment') !== 'Deployment') return undefined;
  const target: PromotionTarget = { kind: 'Deployment', name };
  if (object.namespace !== undefined) target.namespace = object.namespace;
  return target;
}

function contextOf(object: WorkloadObject, node: Node | undefined, field: string): ImageRewriteContext {
  return {
    file: object.source.path,
    line: node?.range ? object.source.line(node.range[0]) : object.line,
    field,
    target: describeTarget(object),
  };
}

/** The containers and init containers of the object's pod template, in file order. */
function containerSlots(object: WorkloadObject): ContainerSlot[] {
  let node: unknown = object.root;
  let inFlow = false;
  const path: string[] = [];
  for (const key of ['spec', 'template', 'spec']) {
    if (!isMap(node)) return [];
    const value = pairOf(node, key)?.value;
    path.push(key);
    if (value === undefined && hasMergeKey(node)) {
      throw new ImageRewriteError(
        'promotion.image_is_alias',
        'the pod template comes from a merge key (<<); refusing to edit through it',
        contextOf(object, node, path.join('.')),
      );
    }
    if (isShared(value)) {
      throw new ImageRewriteError(
        'promotion.image_is_alias',
        'is an alias or anchor; refusing to edit a value other nodes share',
        contextOf(object, value as Node, path.join('.')),
      );
    }
    node = value;
    inFlow ||= isFlow(node);
  }
  if (!isMap(node)) return [];
  const podSpec = node;
  const slots: ContainerSlot[] = [];
  for (const listKey of ['initContainers', 'containers']) {
    const list = pairOf(podSpec, listKey)?.value;
    if (!isSeq(list)) continue;
    const listShared = isShared(list);
    list.items.forEach((item, index) => {
      const field = `${path.join('.')}.${listKey}[${index}]`;
      const resolved = isAlias(item) ? item.resolve(object.document) : item;
      if (!isMap(resolved)) return;
      const name = stringAt(resolved, 'name');
      if (name === undefined) return;
      slots.push({
        name,
        field,
        map: resolved,
        shared: listShared || isShared(item),
        inFlow: inFlow || isFlow(list) || isFlow(resolved),
      });
    });
  }
  return slots;
}

/**
 * The edits that give the object's containers the new images, and what changed (containers already at
 * the image are left alone). Each edit replaces only the image scalar's characters, in the scalar's own
 * quoting style.
 */
export function workloadImageEdits(
  object: WorkloadObject,
  images: readonly ImageUpdate[],
): { edits: TextEdit[]; changed: ImageChange[] } {
  const slots = containerSlots(object);
  const edits: TextEdit[] = [];
  const changed: ImageChange[] = [];
  for (const { container, image } of images) {
    const slot = slots.find((candidate) => candidate.name === container);
    if (!slot) {
      const names = slots.map((candidate) => candidate.name);
      throw new ImageRewriteError(
        'promotion.container_not_found',
        `no container named "${container}" (containers: ${names.join(', ') || 'none'})`,
        { ...contextOf(object, undefined, 'spec.template.spec.containers'), container },
      );
    }
    const field = `${slot.field}.image`;
    const pair = pairOf(slot.map, 'image');
    const value = pair?.value ?? undefined;
    const context = { ...contextOf(object, value ?? slot.map, field), container };
    if (slot.shared || isShared(value) || (pair === undefined && hasMergeKey(slot.map))) {
      throw new ImageRewriteError(
        'promotion.image_is_alias',
        'the image is an alias, an anchor or comes from a merge key; refusing to edit a value other nodes share',
        context,
      );
    }
    if (!isScalar(value) || value.value === null || value.value === undefined) {
      throw new ImageRewriteError('promotion.image_missing', 'the container has no image', context);
    }
    const current = String(value.value);
    if (current === image) continue;
    const text = replacementText(value, image, slot.inFlow || isFlow(slot.map));
    if (text === undefined) {
      throw new ImageRewriteError(
        'promotion.unsupported_yaml',
        `the image is a ${value.type === 'BLOCK_FOLDED' ? 'folded' : 'literal'} block scalar; write it as a plain or quoted value`,
        context,
      );
    }
    const [start, end] = rangeOf(value);
    edits.push({ start, end, text });
    changed.push({ container, from: current, to: image });
  }
  return { edits, changed };
}

/** The names of the object's containers and init containers. */
export function containerNames(object: WorkloadObject): string[] {
  return containerSlots(object).map((slot) => slot.name);
}

/** The images of the object's containers by container name (init containers included). */
export function workloadImages(object: WorkloadObject): Map<string, string> {
  const images = new Map<string, string>();
  for (const slot of containerSlots(object)) {
    const value = pairOf(slot.map, 'image')?.value;
    if (isScalar(value) && typeof value.value === 'string') images.set(slot.name, value.value);
  }
  return images;
}
