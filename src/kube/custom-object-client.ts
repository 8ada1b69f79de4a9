// The CLI's plain client for custom objects: get, list and merge-patch as client-node's CustomObjectsApi
// sends them, for a simple kubeconfig (simple-kubeconfig.ts), sent by plain-kube-http.ts as the
// reconciler's writes are. Loading client-node is most of a short command's start-up (its generated
// models, undici); a rollout verb or `list rollouts` makes two or three requests.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PlainKubeHttp, type PlainKubeRequest } from './plain-kube-http.ts';
import type { SimpleKubeconfig } from './simple-kubeconfig.ts';
import {
  customObjectListPath,
  customObjectPath,
  type CustomObjectListRef,
  type CustomObjectRef,
} from './custom-object-paths.ts';

export type { CustomObjectListRef, CustomObjectRef } from './custom-object-paths.ts';

export interface CustomObjectPatch extends CustomObjectRef {
  body: object;
  fieldManager?: string;
}

/** client-node's own User-Agent, as the typed clients send it (client.ts). */
const USER_AGENT = `kubernetes-client-javascript/${
  (createRequire(import.meta.url)('@kubernetes/client-node/package.json') as { version: string }).version
}`;

/**
 * The client of `simple`, or undefined when a file it names cannot be read now: client-node's error to
 * give, so the caller falls back to it.
 */
export function openCustomObjectClient(simple: SimpleKubeconfig): CustomObjectClient | undefined {
  const client = new CustomObjectClient(simple);
  return client.canSend() ? client : undefined;
}

/**
 * The methods of client-node's CustomObjectsApi a rollout verb and `list rollouts` call, the options
 * argument ignored.
 */
export class CustomObjectClient {
  /** One pool for the command's requests (a read, then a patch or two; a list per group; a watch's reads). */
  private readonly http: PlainKubeHttp;
  /** Why the files could not be read the last time they were: the error client-node would give. */
  private readError: unknown;

  constructor(simple: SimpleKubeconfig) {
    const { cluster, user } = simple;
    this.http = new PlainKubeHttp(
      { getCurrentCluster: () => cluster, getCurrentUser: () => user },
      { limiter: undefined, observers: new Set() },
      {
        userAgent: USER_AGENT,
        readMaterial: (path) => {
          try {
            return readFileSync(path);
          } catch (err) {
            this.readError = err;
            throw err;
          }
        },
      },
    );
  }

  /** True when the kubeconfig's files can be read now. */
  canSend(): boolean {
    return this.http.route() !== undefined;
  }

  getNamespacedCustomObject(ref: CustomObjectRef, _options?: unknown): Promise<unknown> {
    return this.send('GET', this.path(ref), undefined);
  }

  listNamespacedCustomObject(
    ref: CustomObjectListRef & { namespace: string },
    _options?: unknown,
  ): Promise<unknown> {
    return this.send('GET', customObjectListPath(ref), undefined);
  }

  listClusterCustomObject(ref: Omit<CustomObjectListRef, 'namespace'>, _options?: unknown): Promise<unknown> {
    return this.send('GET', customObjectListPath(ref), undefined);
  }

  /** Always an RFC 7386 merge patch: the only kind a verb sends. */
  patchNamespacedCustomObject(patch: CustomObjectPatch, _options?: unknown): Promise<unknown> {
    return this.send('PATCH', this.path(patch, '', patch.fieldManager), patch.body);
  }

  patchNamespacedCustomObjectStatus(patch: CustomObjectPatch, _options?: unknown): Promise<unknown> {
    return this.send('PATCH', this.path(patch, '/status', patch.fieldManager), patch.body);
  }

  /** A GET of any API path on the same connection: the built-in kinds' reads (builtin-object-client.ts). */
  readPath(path: string): Promise<unknown> {
    return this.send('GET', path, undefined);
  }

  /** Lets the process exit at once instead of when the kept-alive connection times out. */
  close(): void {
    this.http.close();
  }

  private path(ref: CustomObjectRef, subresource: '' | '/status' = '', fieldManager?: string): string {
    const query = fieldManager === undefined ? '' : `?fieldManager=${encodeURIComponent(fieldManager)}`;
    return customObjectPath(ref, subresource) + query;
  }

  private send(method: PlainKubeRequest['method'], path: string, body: object | undefined): Promise<unknown> {
    // Files are read again from time to time (a rotated certificate during `status --watch`); one that
    // cannot be read fails the request as client-node's read of it would.
    const route = this.http.route();
    if (route === undefined)
      return Promise.reject(this.readError ?? new Error('the kubeconfig can no longer be read'));
    return this.http.send(
      route,
      body === undefined
        ? { method, path }
        : { method, path, body, contentType: 'application/merge-patch+json' },
    );
  }
}
