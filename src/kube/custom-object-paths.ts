// The API paths of custom objects, as client-node's CustomObjectsApi builds them: one place for every plain
// sender (the reconciler's writes and reads, the CLI's client). No client-node import: the CLI loads it.

const part = (value: string): string => encodeURIComponent(value);

/** Which custom object: the fields of client-node's request objects that name it. */
export interface CustomObjectRef {
  group: string;
  version: string;
  namespace: string;
  plural: string;
  name: string;
}

/** Which custom objects a list asks for: every namespace when `namespace` is absent. */
export interface CustomObjectListRef {
  group: string;
  version: string;
  namespace?: string | undefined;
  plural: string;
  labelSelector?: string | undefined;
}

/** `/apis/GROUP/VERSION/namespaces/NS/PLURAL/NAME` and the subresource (`/status`), without a query. */
export function customObjectPath(ref: CustomObjectRef, subresource: '' | '/status' = ''): string {
  return `/apis/${part(ref.group)}/${part(ref.version)}/namespaces/${part(ref.namespace)}/${part(ref.plural)}/${part(ref.name)}${subresource}`;
}

/** The list's path, with its label selector when it has one. */
export function customObjectListPath(ref: CustomObjectListRef): string {
  const namespace = ref.namespace === undefined ? '' : `/namespaces/${part(ref.namespace)}`;
  const query = ref.labelSelector === undefined ? '' : `?labelSelector=${part(ref.labelSelector)}`;
  return `/apis/${part(ref.group)}/${part(ref.version)}${namespace}/${part(ref.plural)}${query}`;
}
