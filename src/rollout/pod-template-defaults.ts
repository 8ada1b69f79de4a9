// The defaults the API server writes into a stored pod template, applied to one that lacks them.
import { copyJson } from './json-copy.ts';

/** A JSON object as read: members are checked where they are used. */
type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectsIn(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** Sets `key` to `value` when it is absent (undefined, null or ''), as Go's zero value counts as unset. */
function defaultTo(object: JsonObject, key: string, value: unknown): void {
  const current = object[key];
  if (current === undefined || current === null || current === '') object[key] = value;
}

/**
 * The tag an image reference names, '' when it names a digest; 'latest' when it names neither (the
 * registry's rule, which decides the pull policy the API server fills in).
 */
export function imageTagOf(image: string): string {
  if (image.includes('@')) return '';
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? image.slice(colon + 1) : 'latest';
}

function defaultHttpGet(handler: unknown): void {
  if (!isObject(handler) || !isObject(handler.httpGet)) return;
  defaultTo(handler.httpGet, 'path', '/');
  defaultTo(handler.httpGet, 'scheme', 'HTTP');
}

function defaultProbe(probe: unknown): void {
  if (!isObject(probe)) return;
  defaultTo(probe, 'timeoutSeconds', 1);
  defaultTo(probe, 'periodSeconds', 10);
  defaultTo(probe, 'successThreshold', 1);
  defaultTo(probe, 'failureThreshold', 3);
  defaultHttpGet(probe);
}

function defaultFieldRefs(items: unknown): void {
  for (const item of objectsIn(items)) {
    const fieldRef = isObject(item.valueFrom) ? item.valueFrom.fieldRef : item.fieldRef;
    if (isObject(fieldRef)) defaultTo(fieldRef, 'apiVersion', 'v1');
  }
}

function defaultContainer(container: JsonObject, hostNetwork: boolean): void {
  const image = typeof container.image === 'string' ? container.image : '';
  defaultTo(container, 'imagePullPolicy', imageTagOf(image) === 'latest' ? 'Always' : 'IfNotPresent');
  defaultTo(container, 'terminationMessagePath', '/dev/termination-log');
  defaultTo(container, 'terminationMessagePolicy', 'File');
  for (const port of objectsIn(container.ports)) {
    defaultTo(port, 'protocol', 'TCP');
    if (hostNetwork) defaultTo(port, 'hostPort', port.containerPort);
  }
  defaultFieldRefs(container.env);
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(container[probe]);
  if (isObject(container.lifecycle)) {
    defaultHttpGet(container.lifecycle.postStart);
    defaultHttpGet(container.lifecycle.preStop);
  }
}

// 0644: the file mode the API server gives projected files unless told otherwise.
const DEFAULT_FILE_MODE = 0o644;

function defaultVolume(volume: JsonObject): void {
  for (const source of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const entry = volume[source];
    if (isObject(entry)) defaultTo(entry, 'defaultMode', DEFAULT_FILE_MODE);
  }
  if (isObject(volume.downwardAPI)) defaultFieldRefs(volume.downwardAPI.items);
  if (isObject(volume.projected))
    for (const projection of objectsIn(volume.projected.sources))
      if (isObject(projection.downwardAPI)) defaultFieldRefs(projection.downwardAPI.items);
}

/**
 * A copy of `template` with the defaults the API server fills into a pod template (PodSpec, containers,
 * probes, ports, volumes) where they are absent. The deprecated `spec.serviceAccount` is dropped: the
 * server copies `serviceAccountName` into it, so it says nothing of its own.
 */
export function withPodTemplateDefaults(template: object): object {
  const copy = copyJson(template) as JsonObject;
  const spec = copy.spec;
  if (!isObject(spec)) return copy;
  defaultTo(spec, 'restartPolicy', 'Always');
  defaultTo(spec, 'terminationGracePeriodSeconds', 30);
  defaultTo(spec, 'dnsPolicy', 'ClusterFirst');
  defaultTo(spec, 'securityContext', {});
  defaultTo(spec, 'schedulerName', 'default-scheduler');
  delete spec.serviceAccount;
  const hostNetwork = spec.hostNetwork === true;
  for (const list of ['initContainers', 'containers', 'ephemeralContainers'])
    for (const container of objectsIn(spec[list])) defaultContainer(container, hostNetwork);
  for (const volume of objectsIn(spec.volumes)) defaultVolume(volume);
  return copy;
}
