// The reconciler's per-pass writes (ReplicaSet create and patch, the Rollout's annotations and status, its
// Events) sent by plain-kube-http.ts behind client-node's own client types; every other call, and every
// call the plain path cannot send exactly as client-node would, goes to client-node unchanged.
import type {
  AppsV1Api,
  AppsV1ApiCreateNamespacedReplicaSetRequest,
  AppsV1ApiPatchNamespacedReplicaSetRequest,
  ConfigurationOptions,
  CoreV1Api,
  CoreV1ApiCreateNamespacedEventRequest,
  CoreV1ApiPatchNamespacedEventRequest,
  CoreV1ApiReadNamespacedEventRequest,
  CoreV1Event,
  CustomObjectsApi,
  CustomObjectsApiPatchNamespacedCustomObjectRequest,
  CustomObjectsApiPatchNamespacedCustomObjectStatusRequest,
  CustomObjectsApiReplaceNamespacedCustomObjectStatusRequest,
  V1ReplicaSet,
} from '@kubernetes/client-node';
import { customObjectPath } from './custom-object-paths.ts';
import type { PlainKubeHttp, PlainKubeRequest, PlainKubeRoute } from './plain-kube-http.ts';

/** The clients whose methods this module may send plainly (the rest of KubeClients is left as it is). */
export interface WritingClients {
  core: CoreV1Api;
  apps: AppsV1Api;
  custom: CustomObjectsApi;
}

/**
 * The Content-Type each known request option sets (client.ts's MERGE_PATCH, APPLY_PATCH), by identity: a
 * patch with any other option, or none (client-node then sends a JSON patch), goes to client-node.
 */
export type PatchContentTypes = ReadonlyMap<ConfigurationOptions, string>;

/** The query parameters client-node sets, in its order, from the request object's fields. */
interface QueryFields {
  pretty?: string | undefined;
  dryRun?: string | undefined;
  fieldManager?: string | undefined;
  fieldValidation?: string | undefined;
  force?: boolean | undefined;
}

const part = (value: string): string => encodeURIComponent(value);

/** `?pretty=…&dryRun=…&fieldManager=…&fieldValidation=…&force=…`, the fields that are set. */
export function queryOf(fields: QueryFields): string {
  let query = '';
  const add = (name: string, value: string | boolean | undefined): void => {
    if (value === undefined) return;
    query += `${query === '' ? '?' : '&'}${name}=${part(String(value))}`;
  };
  add('pretty', fields.pretty);
  add('dryRun', fields.dryRun);
  add('fieldManager', fields.fieldManager);
  add('fieldValidation', fields.fieldValidation);
  add('force', fields.force);
  return query;
}

/** True when every named field is set: otherwise client-node must throw its RequiredError. */
function has(param: object, fields: readonly string[]): boolean {
  const record = param as Record<string, unknown>;
  return fields.every((field) => record[field] !== undefined && record[field] !== null);
}

/**
 * The request of each method the plain path sends, or undefined for a call it leaves to client-node. Each
 * path, query and Content-Type is the one client-node's generated client builds for the same call.
 */
export const plainWriteRequests = {
  createNamespacedReplicaSet(
    param: AppsV1ApiCreateNamespacedReplicaSetRequest,
  ): PlainKubeRequest | undefined {
    if (!has(param, ['namespace', 'body'])) return undefined;
    return {
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${part(param.namespace)}/replicasets${queryOf(param)}`,
      body: param.body,
    };
  },
  patchNamespacedReplicaSet(
    param: AppsV1ApiPatchNamespacedReplicaSetRequest,
    contentType: string,
  ): PlainKubeRequest | undefined {
    if (!has(param, ['name', 'namespace', 'body'])) return undefined;
    return {
      method: 'PATCH',
      path: `/apis/apps/v1/namespaces/${part(param.namespace)}/replicasets/${part(param.name)}${queryOf(param)}`,
      body: param.body,
      contentType,
    };
  },
  createNamespacedEvent(param: CoreV1ApiCreateNamespacedEventRequest): PlainKubeRequest | undefined {
    if (!has(param, ['namespace', 'body'])) return undefined;
    return {
      method: 'POST',
      path: `/api/v1/namespaces/${part(param.namespace)}/events${queryOf(param)}`,
      body: param.body,
    };
  },
  patchNamespacedEvent(
    param: CoreV1ApiPatchNamespacedEventRequest,
    contentType: string,
  ): PlainKubeRequest | undefined {
    if (!has(param, ['name', 'namespace', 'body'])) return undefined;
    return {
      method: 'PATCH',
      path: `/api/v1/namespaces/${part(param.namespace)}/events/${part(param.name)}${queryOf(param)}`,
      body: param.body,
      contentType,
    };
  },
  readNamespacedEvent(param: CoreV1ApiReadNamespacedEventRequest): PlainKubeRequest | undefined {
    if (!has(param, ['name', 'namespace'])) return undefined;
    return {
      method: 'GET',
      path: `/api/v1/namespaces/${part(param.namespace)}/events/${part(param.name)}${queryOf({ pretty: param.pretty })}`,
    };
  },
  replaceNamespacedCustomObjectStatus(
    param: CustomObjectsApiReplaceNamespacedCustomObjectStatusRequest,
  ): PlainKubeRequest | undefined {
    if (!has(param, ['group', 'version', 'namespace', 'plural', 'name', 'body'])) return undefined;
    return { method: 'PUT', path: customObjectPath(param, '/status') + queryOf(param), body: param.body };
  },
  patchNamespacedCustomObject(
    param: CustomObjectsApiPatchNamespacedCustomObjectRequest,
    contentType: string,
  ): PlainKubeRequest | undefined {
    if (!has(param, ['group', 'version', 'namespace', 'plural', 'name', 'body'])) return undefined;
    return {
      method: 'PATCH',
      path: customObjectPath(param, '') + queryOf(param),
      body: param.body,
      contentType,
    };
  },
  patchNamespacedCustomObjectStatus(
    param: CustomObjectsApiPatchNamespacedCustomObjectStatusRequest,
    contentType: string,
  ): PlainKubeRequest | undefined {
    if (!has(param, ['group', 'version', 'namespace', 'plural', 'name', 'body'])) return undefined;
    return {
      method: 'PATCH',
      path: customObjectPath(param, '/status') + queryOf(param),
      body: param.body,
      contentType,
    };
  },
};

/**
 * `clients` with the writes of {@link plainWriteRequests} sent by `http` whenever the kubeconfig's current
 * context is simple and the call carries no request option but a known patch Content-Type; each client
 * is a view of client-node's own (its other methods, read through). Answers are the API server's JSON as
 * parsed, not client-node's model classes: timestamps stay strings (the callers read only names and
 * resourceVersions). Failures are those client-node throws (see KubeHttpStatusError), so kubeCall maps
 * them to the same typed errors.
 */
export function withPlainWrites<T extends WritingClients>(
  clients: T,
  http: PlainKubeHttp,
  patchContentTypes: PatchContentTypes,
): T {
  /** The plain route for a call with `options`, when there is one; `patch` calls need a known Content-Type. */
  const routeFor = (
    options: ConfigurationOptions | undefined,
    patch: boolean,
  ): { route: PlainKubeRoute; contentType: string } | undefined => {
    let contentType = 'application/json';
    if (patch) {
      const known = options === undefined ? undefined : patchContentTypes.get(options);
      if (known === undefined) return undefined;
      contentType = known;
    } else if (options !== undefined) return undefined;
    const route = http.route();
    return route === undefined ? undefined : { route, contentType };
  };
  const send = <R>(route: PlainKubeRoute, request: PlainKubeRequest): Promise<R> =>
    http.send(route, request) as Promise<R>;

  const { apps: appsApi, core: coreApi, custom: customApi } = clients;
  const apps = Object.create(appsApi) as AppsV1Api;
  apps.createNamespacedReplicaSet = (param, options) => {
    const plain = routeFor(options, false);
    const request = plain && plainWriteRequests.createNamespacedReplicaSet(param);
    if (plain === undefined || request === undefined)
      return appsApi.createNamespacedReplicaSet(param, options);
    return send<V1ReplicaSet>(plain.route, request);
  };
  apps.patchNamespacedReplicaSet = (param, options) => {
    const plain = routeFor(options, true);
    const request = plain && plainWriteRequests.patchNamespacedReplicaSet(param, plain.contentType);
    if (plain === undefined || request === undefined)
      return appsApi.patchNamespacedReplicaSet(param, options);
    return send<V1ReplicaSet>(plain.route, request);
  };

  const core = Object.create(coreApi) as CoreV1Api;
  core.createNamespacedEvent = (param, options) => {
    const plain = routeFor(options, false);
    const request = plain && plainWriteRequests.createNamespacedEvent(param);
    if (plain === undefined || request === undefined) return coreApi.createNamespacedEvent(param, options);
    return send<CoreV1Event>(plain.route, request);
  };
  core.patchNamespacedEvent = (param, options) => {
    const plain = routeFor(options, true);
    const request = plain && plainWriteRequests.patchNamespacedEvent(param, plain.contentType);
    if (plain === undefined || request === undefined) return coreApi.patchNamespacedEvent(param, options);
    return send<CoreV1Event>(plain.route, request);
  };
  core.readNamespacedEvent = (param, options) => {
    const plain = routeFor(options, false);
    const request = plain && plainWriteRequests.readNamespacedEvent(param);
    if (plain === undefined || request === undefined) return coreApi.readNamespacedEvent(param, options);
    return send<CoreV1Event>(plain.route, request);
  };

  const custom = Object.create(customApi) as CustomObjectsApi;
  custom.replaceNamespacedCustomObjectStatus = (param, options) => {
    const plain = routeFor(options, false);
    const request = plain && plainWriteRequests.replaceNamespacedCustomObjectStatus(param);
    if (plain === undefined || request === undefined)
      return customApi.replaceNamespacedCustomObjectStatus(param, options);
    return send<object>(plain.route, request);
  };
  custom.patchNamespacedCustomObject = (param, options) => {
    const plain = routeFor(options, true);
    const request = plain && plainWriteRequests.patchNamespacedCustomObject(param, plain.contentType);
    if (plain === undefined || request === undefined)
      return customApi.patchNamespacedCustomObject(param, options);
    return send<object>(plain.route, request);
  };
  custom.patchNamespacedCustomObjectStatus = (param, options) => {
    const plain = routeFor(options, true);
    const request = plain && plainWriteRequests.patchNamespacedCustomObjectStatus(param, plain.contentType);
    if (plain === undefined || request === undefined)
      return customApi.patchNamespacedCustomObjectStatus(param, options);
    return send<object>(plain.route, request);
  };

  return { ...clients, apps, core, custom };
}
