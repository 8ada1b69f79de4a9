// The CLI's plain client for custom objects: get, list and merge-patch over node:http(s), as client-node's
// CustomObjectsApi sends them, for a simple kubeconfig (simple-kubeconfig.ts). Loading client-node is
// most of a short command's start-up (its generated models, undici); a rollout verb or `list rollouts`
// makes two or three requests.
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createRequire } from 'node:module';
import type { SimpleKubeconfig } from './simple-kubeconfig.ts';

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
  namespace?: string;
  plural: string;
  labelSelector?: string;
}

export interface CustomObjectPatch extends CustomObjectRef {
  body: object;
  fieldManager?: string;
}

/**
 * An unsuccessful answer, shaped as client-node's ApiException (code, body, headers), so errors.ts maps
 * it to the same typed error with the same message.
 */
export class CustomObjectRequestError extends Error {
  override readonly name = 'CustomObjectRequestError';
  constructor(
    readonly code: number,
    readonly body: string | undefined,
    readonly headers: Record<string, string>,
  ) {
    super(`HTTP-Code: ${code}`);
  }
}

/** client-node's own User-Agent, as the typed clients send it (client.ts). */
const USER_AGENT = `kubernetes-client-javascript/${
  (createRequire(import.meta.url)('@kubernetes/client-node/package.json') as { version: string }).version
}`;

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

/**
 * The methods of client-node's CustomObjectsApi a rollout verb and `list rollouts` call, the options
 * argument ignored.
 */
export class CustomObjectClient {
  /** One connection for the command's requests (a read, then a patch or two; a list per group). */
  private readonly agent: HttpAgent;

  constructor(private readonly config: SimpleKubeconfig) {
    this.agent = config.server.startsWith('https:')
      ? new HttpsAgent({
          keepAlive: true,
          ca: config.ca,
          cert: config.cert,
          key: config.key,
          rejectUnauthorized: !config.skipTlsVerify,
          servername: config.tlsServerName,
        })
      : new HttpAgent({ keepAlive: true });
  }

  getNamespacedCustomObject(ref: CustomObjectRef, _options?: unknown): Promise<unknown> {
    return this.send('GET', this.path(ref), undefined);
  }

  listNamespacedCustomObject(
    ref: CustomObjectListRef & { namespace: string },
    _options?: unknown,
  ): Promise<unknown> {
    return this.send('GET', this.listPath(ref), undefined);
  }

  listClusterCustomObject(ref: Omit<CustomObjectListRef, 'namespace'>, _options?: unknown): Promise<unknown> {
    return this.send('GET', this.listPath(ref), undefined);
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
    this.agent.destroy();
  }

  private path(ref: CustomObjectRef, subresource = '', fieldManager?: string): string {
    const part = (value: string): string => encodeURIComponent(value);
    const query = fieldManager === undefined ? '' : `?fieldManager=${part(fieldManager)}`;
    return `/apis/${part(ref.group)}/${part(ref.version)}/namespaces/${part(ref.namespace)}/${part(ref.plural)}/${part(ref.name)}${subresource}${query}`;
  }

  private listPath(ref: CustomObjectListRef): string {
    const part = (value: string): string => encodeURIComponent(value);
    const namespace = ref.namespace === undefined ? '' : `/namespaces/${part(ref.namespace)}`;
    const query = ref.labelSelector === undefined ? '' : `?labelSelector=${part(ref.labelSelector)}`;
    return `/apis/${part(ref.group)}/${part(ref.version)}${namespace}/${part(ref.plural)}${query}`;
  }

  private send(method: 'GET' | 'PATCH', path: string, body: object | undefined): Promise<unknown> {
    const url = new URL(this.config.server + path);
    const headers: Record<string, string> = {
      Accept: 'application/json, */*;q=0.8',
      'User-Agent': USER_AGENT,
    };
    if (this.config.authorization !== undefined) headers.Authorization = this.config.authorization;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) {
      headers['Content-Type'] = 'application/merge-patch+json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      // A failure to connect is told as client-node's fetch tells it, its cause carrying the code.
      const failed = (err: Error): void => reject(new TypeError('fetch failed', { cause: err }));
      const request =
        url.protocol === 'https:'
          ? httpsRequest(url, { method, headers, agent: this.agent })
          : httpRequest(url, { method, headers, agent: this.agent });
      request.on('error', failed);
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', failed);
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status >= 200 && status <= 299) {
            try {
              resolve(JSON.parse(text));
            } catch (err) {
              reject(err as Error);
            }
            return;
          }
          // client-node keeps no body with a 401.
          reject(
            new CustomObjectRequestError(
              status,
              status === 401 ? undefined : text,
              flatHeaders(response.headers),
            ),
          );
        });
      });
      request.end(payload);
    });
  }
}
