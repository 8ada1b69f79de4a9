// The sandbox's HTTP front: routes Kubernetes REST requests to the store with real API semantics.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { Clock } from '../../clock/clock.ts';
import type { Logger } from '../../log/logger.ts';
import {
  ApiStatusError,
  applyConflict,
  badRequest,
  conflict,
  internalError,
  invalid,
  methodNotAllowed,
  notFound,
  unauthorized,
  unsupportedMediaType,
} from '../api/api-status-error.ts';
import type { WriteAudit } from '../audit/write-audit.ts';
import type { FaultSettings } from '../faults/fault-settings.ts';
import { faultSettingsPatchSchema } from '../faults/fault-settings.ts';
import type { SeededRandom } from '../random/seeded-random.ts';
import type { ResourceRegistry } from '../resources/resource-registry.ts';
import type { ResourceType } from '../resources/resource-type.ts';
import { apiVersionOf, parseApiVersion } from '../resources/resource-type.ts';
import {
  fieldSelectorKeys,
  fieldsOf,
  parseFieldSelector,
  parseLabelSelector,
} from '../selectors/label-selector.ts';
import type { DeleteOptions, ObjectStore, PropagationPolicy, StoredObject } from '../store/object-store.ts';
import { formatKubeTime, isPlainObject, sandboxNodeName } from '../controllers/index.ts';
import { applyDefaults } from '../validation/apply-defaults.ts';
import { validateObject } from '../validation/validate-object.ts';
import { admitCustomResource, fieldValidationOf } from '../validation/custom-resource-admission.ts';
import { coreVersions, group, groupList, resourceList, SANDBOX_VERSION } from './discovery.ts';
import { openApiGroupVersion, openApiRoot } from './openapi.ts';
import { formatApplyConflictMessage } from '../patch/index.ts';
import type { PatchEngines } from './patch-engines.ts';
import { patchErrorToStatus } from './patch-engines.ts';
import { decodeProtobufObject } from './protobuf-body.ts';
import { evictPod } from './eviction-subresource.ts';
import { toScale, withScale } from './scale-subresource.ts';
import { buildTable, type IncludeObject } from './table.ts';
import { serveWatch } from './watch-stream.ts';
import { actingUser } from '../rbac/impersonation.ts';
import {
  CREATE_SUBJECT_ACCESS_REVIEW,
  reviewSubjectAccess,
  SUBJECT_ACCESS_REVIEW_PATH,
} from '../rbac/subject-access-review.ts';
import { forbidden, type RbacAuthorizer } from '../rbac/rbac-authorizer.ts';
import { resourceAttributes, type RequestAttributes, type RequestUser } from '../rbac/request-attributes.ts';
import {
  MIN_TOKEN_SECONDS,
  DEFAULT_TOKEN_SECONDS,
  type ServiceAccountTokens,
} from '../rbac/service-account-tokens.ts';

/** Everything the HTTP front needs; the controllers and fault settings are shared with the in-process API. */
export interface ApiServerDeps {
  store: ObjectStore;
  registry: ResourceRegistry;
  clock: Clock;
  faults: FaultSettings;
  faultRandom: SeededRandom;
  /** For defaulted values such as Service ClusterIPs. */
  random: SeededRandom;
  patches: PatchEngines;
  logger: Logger;
  /** The admin's bearer token: required when set, and never authorized (it stands for cluster-admin). */
  token?: string;
  /** ServiceAccount tokens (TokenRequest): they authenticate as `system:serviceaccount:<ns>:<name>`. */
  serviceAccountTokens: ServiceAccountTokens;
  /** RBAC mode: every request not made with the admin token is authorized by the stored roles. */
  authorizer?: RbacAuthorizer;
  /** Told of every request RBAC refuses (the user and the 403's message). */
  onForbidden?(user: string, message: string): void;
  bookmarkIntervalMs: number;
  /** Called after every successful write so the controllers can react. */
  onWrite(): void;
  /** Where write requests are recorded once answered (absent: not recorded). */
  audit?: WriteAudit;
}

/** DeleteOptions as read from the body and query. */
type DeleteRequest = Pick<DeleteOptions, 'propagationPolicy' | 'preconditions' | 'gracePeriodSeconds'>;

interface Route {
  type: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Whoever holds the admin token, or anyone when no token is required (the sandbox without RBAC). */
const ADMIN: RequestUser = {
  name: 'sandbox-admin',
  groups: ['system:masters', 'system:authenticated'],
  admin: true,
};

/** Who made each request and what it was authorized for (an apply that creates is authorized again). */
const requestIdentity = new WeakMap<IncomingMessage, { user: RequestUser; attrs: RequestAttributes }>();
/** Who sent a request that acts as another user (impersonation), for the audit log. */
const requestSender = new WeakMap<IncomingMessage, RequestUser>();

function notServed(): ApiStatusError {
  return new ApiStatusError({
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    details: {},
    code: 404,
  });
}

function protobufUnsupported(): ApiStatusError {
  return new ApiStatusError({
    message:
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (protobuf only for Namespace, ConfigMap, Secret, ServiceAccount, TokenRequest and the RBAC kinds)',
    reason: 'UnsupportedMediaType',
    code: 415,
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  return (await readRawBody(req)).toString('utf8');
}

async function readRawBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES)
      throw new ApiStatusError({
        message: 'the request is too large',
        reason: 'RequestEntityTooLarge',
        code: 413,
      });
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** The JSON each response carried, for the audit log (which names what a create made, and its version). */
const answeredBodies = new WeakMap<ServerResponse, unknown>();

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  answeredBodies.set(res, body);
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(
      `Object 'Kind' is missing in '${text.slice(0, 200)}': ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

function decodeYaml(text: string): unknown {
  // Clients send apply patches as JSON text (client-node, kubectl), which YAML 1.2 reads as JSON does:
  // JSON.parse takes a fraction of the YAML parser's time, most on the large ones (every CRD at every
  // sandbox start). Text JSON refuses is real YAML, or invalid, and goes to the YAML parser.
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // YAML flow mappings (`{a: 1}`) start with a brace too.
    }
  }
  try {
    return parseYaml(text) as unknown;
  } catch (err) {
    throw badRequest(`error decoding YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The media type of the request body, without parameters (`; charset=utf-8`). */
function mediaTypeOf(req: IncomingMessage, fallback: string): string {
  return (req.headers['content-type'] ?? fallback).split(';')[0]?.trim() ?? '';
}

/** A JSON or YAML body as a value; any other media type is answered 415, as the real server does. */
function decodeTextBody(mediaType: string, text: string): unknown {
  if (mediaType === 'application/json' || mediaType === '') return parseJsonBody(text);
  if (mediaType === 'application/yaml') return decodeYaml(text);
  throw new ApiStatusError({
    message: `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
    reason: 'UnsupportedMediaType',
    code: 415,
  });
}

function apiVersionMismatch(obj: StoredObject, expected: string): ApiStatusError {
  return badRequest(
    `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expected})`,
  );
}

/** PUT and apply name the object twice (URL and body); a body may leave the name out, never differ. */
function checkNameMatchesUrl(obj: StoredObject, name: string): void {
  if (obj.metadata.name !== undefined && obj.metadata.name !== name) {
    throw badRequest(
      `the name of the object (${String(obj.metadata.name)}) does not match the name on the URL (${name})`,
    );
  }
}

/** Runs a patch engine; its typed errors become the Status a real API server answers with. */
function runPatchEngine<T>(type: ResourceType, name: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw patchErrorToStatus(err, { ...type }, name) ?? err;
  }
}

function wantsTable(req: IncomingMessage): boolean {
  return /as=Table/.test(req.headers.accept ?? '');
}

/** The API server: a node:http server plus the request handler (exposed for tests). */
export class ApiServer {
  readonly server: Server;

  constructor(private readonly deps: ApiServerDeps) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => this.fail(res, err));
    });
  }

  private fail(res: ServerResponse, err: unknown): void {
    const status =
      err instanceof ApiStatusError ? err : internalError(err instanceof Error ? err.message : String(err));
    if (!(err instanceof ApiStatusError)) this.deps.logger.error({ err }, 'sandbox request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    sendJson(res, status.httpStatus, status.status);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const method = (req.method ?? 'GET').toUpperCase();
    const sender = this.authenticate(req);
    const user = actingUser(req.headers, sender, (asking, attrs) => this.authorize(req, asking, attrs));
    if (user !== sender) requestSender.set(req, sender);
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const segments = path
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
    // As kube-apiserver: authenticate, then authorize, before anything else (faults included) happens.
    if (path === SUBJECT_ACCESS_REVIEW_PATH) return this.reviewAccess(req, res, user, method);
    const isResource =
      (segments[0] === 'api' && segments.length >= 3) || (segments[0] === 'apis' && segments.length >= 4);
    const route = isResource ? this.route(segments) : undefined;
    this.authorize(
      req,
      user,
      route
        ? resourceAttributes(method, url, {
            group: route.type.group,
            version: route.type.version,
            plural: route.type.plural,
            namespace: route.namespace,
            name: route.name,
            subresource: route.subresource,
          })
        : { kind: 'nonResource', verb: method.toLowerCase(), path: url.pathname },
    );
    if (path.startsWith('/sandbox/')) return this.handleAdmin(req, res, path, method);
    if (this.deps.faults.latencyMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.deps.faults.latencyMs));
    }
    if (this.deps.faults.errorRate > 0 && this.deps.faultRandom.chance(this.deps.faults.errorRate)) {
      throw internalError('sandbox: injected server error');
    }
    const refused = method !== 'GET' ? this.deps.faults.refuseWrites.find((r) => r.path === path) : undefined;
    if (refused) {
      throw new ApiStatusError({
        message: refused.message,
        // The reasons kube-apiserver gives these codes (apimachinery's StatusReason table).
        reason:
          refused.code === 503 ? 'ServiceUnavailable' : refused.code === 504 ? 'Timeout' : 'InternalError',
        code: refused.code,
      });
    }
    if (route) return this.handleResource(req, res, url, method, route);
    const discovery = this.discovery(path, segments, req);
    if (discovery === undefined) throw notServed();
    if (method !== 'GET')
      throw methodNotAllowed(`the server does not allow this method on the requested resource`);
    sendJson(res, 200, discovery);
  }

  /** POST a SubjectAccessReview: answered from the same RBAC rules every request is held to. */
  private async reviewAccess(
    req: IncomingMessage,
    res: ServerResponse,
    user: RequestUser,
    method: string,
  ): Promise<void> {
    this.authorize(req, user, CREATE_SUBJECT_ACCESS_REVIEW);
    if (method !== 'POST')
      throw methodNotAllowed('the server does not allow this method on the requested resource');
    const body = decodeTextBody(mediaTypeOf(req, 'application/json'), await readBody(req));
    const { authorizer } = this.deps;
    sendJson(
      res,
      201,
      reviewSubjectAccess(body, authorizer ? (u, a) => authorizer.authorize(u, a) : undefined),
    );
  }

  /**
   * The admin token, or a ServiceAccount token. Without a required token, a request with no credentials
   * is the admin (kube-apiserver's old insecure port: kubectl sends no credentials over plain HTTP), and
   * so, outside RBAC mode, is any bearer the sandbox does not know (the sandbox before tokens existed).
   */
  private authenticate(req: IncomingMessage): RequestUser {
    const header = req.headers.authorization;
    const bearer = header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
    if (this.deps.token !== undefined && bearer === this.deps.token) return ADMIN;
    const account = bearer === undefined ? undefined : this.deps.serviceAccountTokens.authenticate(bearer);
    if (account) return account;
    if (this.deps.token === undefined && (bearer === undefined || !this.deps.authorizer)) return ADMIN;
    throw unauthorized();
  }

  /** RBAC mode: 403 with kube-apiserver's Status body unless a role bound to the user allows it. */
  private authorize(req: IncomingMessage, user: RequestUser, attrs: RequestAttributes): void {
    requestIdentity.set(req, { user, attrs });
    const { authorizer } = this.deps;
    if (!authorizer || authorizer.authorize(user, attrs)) return;
    const refusal = forbidden(user, attrs);
    this.deps.onForbidden?.(user.name, refusal.message);
    throw refusal;
  }

  private discovery(path: string, segments: string[], req: IncomingMessage): unknown {
    const { registry } = this.deps;
    if (path === '/version') return SANDBOX_VERSION;
    if (path === '/healthz' || path === '/livez' || path === '/readyz') return 'ok';
    if (path === '/api') return coreVersions(req.headers.host ?? '127.0.0.1');
    if (path === '/apis') return groupList(registry);
    if (segments[0] === 'api' && segments.length === 2)
      return resourceList(registry, '', segments[1] ?? '') ?? notFoundThrow();
    if (segments[0] === 'apis' && segments.length === 2)
      return group(registry, segments[1] ?? '') ?? notFoundThrow();
    if (segments[0] === 'apis' && segments.length === 3) {
      return resourceList(registry, segments[1] ?? '', segments[2] ?? '') ?? notFoundThrow();
    }
    if (path === '/openapi/v3') return openApiRoot(registry);
    if (segments[0] === 'openapi' && segments[1] === 'v3') {
      const isCore = segments[2] === 'api';
      const doc = isCore
        ? openApiGroupVersion(registry, '', segments[3] ?? '')
        : openApiGroupVersion(registry, segments[3] ?? '', segments[4] ?? '');
      return doc ?? notFoundThrow();
    }
    if (segments[0] === 'openapi') throw notServed();
    return undefined;
  }

  private route(segments: string[]): Route {
    let groupName: string;
    let version: string;
    let rest: string[];
    if (segments[0] === 'api' && segments[1] !== undefined) {
      groupName = '';
      version = segments[1];
      rest = segments.slice(2);
    } else if (segments[0] === 'apis' && segments[1] !== undefined && segments[2] !== undefined) {
      groupName = segments[1];
      version = segments[2];
      rest = segments.slice(3);
    } else {
      throw notServed();
    }
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, subresource, extra] = rest;
    if (plural === undefined || extra !== undefined) throw notServed();
    const type = this.deps.registry.byPlural(groupName, version, plural);
    if (!type) throw notServed();
    if (!type.namespaced && namespace !== undefined) throw notServed();
    if (type.namespaced && namespace === undefined && name !== undefined) throw notServed();
    if (
      subresource !== undefined &&
      !(subresource === 'status' && type.statusSubresource) &&
      !(subresource === 'scale' && type.scale !== undefined) &&
      !(subresource === 'eviction' && type.eviction === true) &&
      !(subresource === 'token' && type.tokenRequest === true) &&
      subresource !== 'finalize'
    ) {
      throw notServed();
    }
    return { type, namespace, name, subresource };
  }

  private async handleAdmin(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    method: string,
  ): Promise<void> {
    const { faults, store } = this.deps;
    if (path === '/sandbox/faults') {
      if (method === 'GET') return sendJson(res, 200, faults);
      if (method === 'PUT' || method === 'PATCH' || method === 'POST') {
        const parsed = faultSettingsPatchSchema.safeParse(parseJsonBody(await readBody(req)));
        if (!parsed.success) throw badRequest(`invalid fault settings: ${parsed.error.message}`);
        Object.assign(faults, parsed.data);
        return sendJson(res, 200, faults);
      }
      throw methodNotAllowed('GET, PUT or PATCH /sandbox/faults');
    }
    if (path === '/sandbox/compact' && method === 'POST') {
      store.compact();
      return sendJson(res, 200, { compactedThrough: store.oldestResumableVersion });
    }
    throw notServed();
  }

  private async handleResource(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    method: string,
    route: Route,
  ): Promise<void> {
    const { type, name } = route;
    const isWrite = method !== 'GET';
    if (isWrite && this.deps.audit) this.recordWhenAnswered(req, res, method, route);
    if (isWrite && method !== 'POST' && name !== undefined && this.deps.faults.conflictRate > 0) {
      if (
        (method === 'PUT' || method === 'PATCH') &&
        this.deps.faultRandom.chance(this.deps.faults.conflictRate)
      ) {
        throw conflict(type, name);
      }
    }
    if (name !== undefined && route.subresource === 'scale')
      return this.scale(req, res, url, route, name, method);
    if (name !== undefined && route.subresource === 'eviction')
      return this.evict(req, res, url, route, name, method);
    if (name !== undefined && route.subresource === 'token')
      return this.requestToken(req, res, route, name, method);
    if (name === undefined) {
      if (method === 'GET') return this.list(req, res, url, route);
      if (method === 'POST') return this.create(req, res, url, route);
      if (method === 'DELETE') return this.deleteCollection(req, res, url, route);
      throw methodNotAllowed(`the server does not allow this method on the requested resource`);
    }
    if (method === 'GET') return this.get(req, res, url, route, name);
    if (method === 'PUT') return this.replace(req, res, url, route, name);
    if (method === 'PATCH') return this.patch(req, res, url, route, name);
    if (method === 'DELETE') return this.delete(req, res, url, route, name);
    throw methodNotAllowed(`the server does not allow this method on the requested resource`);
  }

  private recordWhenAnswered(req: IncomingMessage, res: ServerResponse, verb: string, route: Route): void {
    const audit = this.deps.audit;
    res.once('finish', () => {
      const body = answeredBodies.get(res);
      const meta = isPlainObject(body) && isPlainObject(body.metadata) ? body.metadata : {};
      audit?.record({
        verb,
        group: route.type.group,
        resource: route.type.plural,
        namespace: route.namespace,
        name: route.name ?? nameIn(meta) ?? (isPlainObject(body) ? nameIn(body.details) : undefined),
        subresource: route.subresource,
        code: res.statusCode,
        resourceVersion: typeof meta.resourceVersion === 'string' ? meta.resourceVersion : undefined,
        userAgent: req.headers['user-agent'],
        ...this.auditedUsers(req),
      });
    });
  }

  /** The audit's user and impersonated user, as kube-apiserver records them. */
  private auditedUsers(req: IncomingMessage): { user?: string; impersonatedUser?: string } {
    const acting = requestIdentity.get(req)?.user;
    const sender = requestSender.get(req);
    if (sender === undefined) return acting ? { user: acting.name } : {};
    return { user: sender.name, ...(acting ? { impersonatedUser: acting.name } : {}) };
  }

  private ns(route: Route): string {
    return route.type.namespaced ? (route.namespace ?? '') : '';
  }

  private respondObject(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    code: number,
    type: ResourceType,
    obj: StoredObject,
  ): void {
    if (wantsTable(req)) {
      sendJson(
        res,
        code,
        buildTable(type, [obj], this.deps.clock.now(), includeObject(url), {
          resourceVersion: obj.metadata.resourceVersion,
        }),
      );
      return;
    }
    sendJson(res, code, obj);
  }

  private get(req: IncomingMessage, res: ServerResponse, url: URL, route: Route, name: string): void {
    // Uncopied: the answer is serialized at once and the store never changes an object it holds (it
    // replaces it). A copy of each object read was the sandbox's largest cost in the suite's profiles.
    const obj = this.deps.store.peek(route.type, this.ns(route), name);
    if (!obj) throw notFound(route.type, name);
    this.respondObject(req, res, url, 200, route.type, obj);
  }

  private matcher(url: URL): (obj: StoredObject) => boolean {
    const labels = parseLabelSelector(url.searchParams.get('labelSelector'));
    const fieldText = url.searchParams.get('fieldSelector');
    const fields = parseFieldSelector(fieldText);
    const keys = fieldSelectorKeys(fieldText);
    return (o) =>
      labels.matches(o.metadata.labels ?? {}) &&
      (keys.length === 0 || fields.matches(fieldsOf(o as unknown as Record<string, unknown>, keys)));
  }

  private list(req: IncomingMessage, res: ServerResponse, url: URL, route: Route): void {
    const { type } = route;
    const matches = this.matcher(url);
    const watch = url.searchParams.get('watch');
    if (watch === 'true' || watch === '1') {
      const table = wantsTable(req);
      const include = includeObject(url);
      const timeout = url.searchParams.get('timeoutSeconds');
      serveWatch(
        res,
        {
          type,
          namespace: route.namespace,
          matches,
          resourceVersion: url.searchParams.get('resourceVersion') ?? undefined,
          allowBookmarks: url.searchParams.get('allowWatchBookmarks') === 'true',
          timeoutMs: timeout ? Number(timeout) * 1000 : undefined,
          render: (obj) =>
            table
              ? buildTable(type, [obj], this.deps.clock.now(), include, {
                  resourceVersion: obj.metadata.resourceVersion,
                })
              : obj,
        },
        {
          store: this.deps.store,
          faults: this.deps.faults,
          bookmarkIntervalMs: this.deps.bookmarkIntervalMs,
        },
      );
      return;
    }
    const labels = parseLabelSelector(url.searchParams.get('labelSelector')).equalities;
    const limit = Number(url.searchParams.get('limit') ?? '0');
    const token = url.searchParams.get('continue');
    // Later pages carry the first page's resourceVersion, as a real server's do.
    const { after, resourceVersion: listVersion } = token
      ? decodeContinue(token)
      : { after: undefined, resourceVersion: String(this.deps.store.resourceVersion) };
    // Uncopied, as a get's object: only serialized.
    const page = this.deps.store.listPage(type, route.namespace, matches, labels, {
      ...(after !== undefined && { after }),
      limit,
      copy: false,
    });
    const items = page.items;
    const listMeta: Record<string, unknown> = { resourceVersion: listVersion };
    if (page.remaining > 0 && page.lastKey !== undefined) {
      listMeta.continue = encodeContinue(page.lastKey, listVersion);
      listMeta.remainingItemCount = page.remaining;
    }
    if (wantsTable(req)) {
      sendJson(res, 200, buildTable(type, items, this.deps.clock.now(), includeObject(url), listMeta));
      return;
    }
    sendJson(res, 200, { kind: type.listKind, apiVersion: apiVersionOf(type), metadata: listMeta, items });
  }

  private async readObject(req: IncomingMessage, route: Route): Promise<StoredObject> {
    const mediaType = mediaTypeOf(req, 'application/json');
    let body: unknown;
    if (mediaType === 'application/vnd.kubernetes.protobuf') {
      // kubectl's `create namespace|configmap|secret|serviceaccount` generators send protobuf.
      body = decodeProtobufObject(await readRawBody(req));
      if (body === undefined) throw protobufUnsupported();
    } else {
      body = decodeTextBody(mediaType, await readBody(req));
    }
    if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
    const obj = body as StoredObject;
    if (!isPlainObject(obj.metadata)) obj.metadata = {};
    const expected = apiVersionOf(route.type);
    if (
      (obj.kind !== undefined && obj.kind !== route.type.kind) ||
      (obj.apiVersion !== undefined && obj.apiVersion !== expected)
    ) {
      throw apiVersionMismatch(obj, expected);
    }
    obj.apiVersion = expected;
    obj.kind = route.type.kind;
    normalizeMetaTimes(obj);
    if (
      route.type.namespaced &&
      obj.metadata.namespace !== undefined &&
      obj.metadata.namespace !== '' &&
      obj.metadata.namespace !== route.namespace
    ) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    return obj;
  }

  private async create(req: IncomingMessage, res: ServerResponse, url: URL, route: Route): Promise<void> {
    const obj = await this.readObject(req, route);
    this.insert(req, res, url, route, obj, (checked) =>
      this.deps.patches.recordUpdate(undefined, checked, fieldManagerOf(req, url), this.deps.clock.now()),
    );
  }

  /**
   * The common tail of POST and of an apply that creates: default, validate, store, answer 201.
   * `beforeStore` adds what only a stored object carries (a dry run answers without it).
   */
  private insert(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
    obj: StoredObject,
    beforeStore: (obj: StoredObject) => StoredObject = (checked) => checked,
  ): void {
    applyDefaults(route.type, obj, this.deps.random, sandboxNodeName);
    this.admitCustom(req, res, url, route, obj);
    validateObject(route.type, obj);
    if (isDryRun(url)) return this.respondObject(req, res, url, 201, route.type, obj);
    const created = this.deps.store.create(route.type, beforeStore(obj), this.ns(route));
    this.deps.onWrite();
    this.respondObject(req, res, url, 201, route.type, created);
  }

  /**
   * Custom resources of a CRD version with a schema: pruned, defaulted and validated as kube-apiserver does;
   * fields it dropped are named in `Warning` headers unless `fieldValidation` says otherwise.
   */
  private admitCustom(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
    obj: StoredObject,
    old?: StoredObject,
  ): void {
    const schema = route.type.schema;
    if (!schema) return;
    const applied = mediaTypeOf(req, '') === 'application/apply-patch+yaml';
    // Go's NamespacedName: "namespace/name", "/name" for cluster-scoped kinds.
    const ref = `${route.type.namespaced ? (route.namespace ?? '') : ''}/${obj.metadata.name ?? ''}`;
    const warnings = admitCustomResource(route.type, schema, obj, {
      fieldValidation: fieldValidationOf(url),
      ...(applied ? { appliedObject: ref } : {}),
      ...(old ? { old } : {}),
      ...(route.subresource === 'status' ? { subresource: 'status' as const } : {}),
    });
    if (warnings.length > 0) {
      // Header values must be Latin-1: a field name outside ASCII is escaped as Go's strconv.Quote would.
      const quote = (text: string): string =>
        JSON.stringify(text).replace(
          /[^\x20-\x7e]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
        );
      res.setHeader(
        'Warning',
        warnings.map((warning) => `299 - ${quote(warning)}`),
      );
    }
  }

  private async replace(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
    name: string,
  ): Promise<void> {
    const obj = await this.readObject(req, route);
    checkNameMatchesUrl(obj, name);
    obj.metadata.name = name;
    this.write(req, res, url, route, name, obj, false);
  }

  /** The common tail of PUT and non-apply PATCH: validate, update, answer. */
  private write(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
    name: string,
    input: StoredObject,
    patched: boolean,
    recordManager = true,
    render?: (obj: StoredObject) => unknown,
  ): void {
    const { store } = this.deps;
    const status = route.subresource === 'status';
    if (!status) applyDefaults(route.type, input, this.deps.random, sandboxNodeName);
    const current = store.get(route.type, this.ns(route), name);
    this.admitCustom(req, res, url, route, input, current);
    if (!status) validateObject(route.type, input);
    if (!current) throw notFound(route.type, name);
    const obj = recordManager
      ? this.deps.patches.recordUpdate(
          current,
          input,
          fieldManagerOf(req, url),
          this.deps.clock.now(),
          status ? 'status' : undefined,
        )
      : input;
    const answer = (written: StoredObject): void => {
      if (render) sendJson(res, 200, render(written));
      else this.respondObject(req, res, url, 200, route.type, written);
    };
    if (isDryRun(url)) return answer(obj);
    const updated = store.update(route.type, obj, this.ns(route), {
      ...(status ? { subresource: 'status' as const } : {}),
      requireResourceVersion: route.type.crdName !== undefined && !patched,
    });
    this.deps.onWrite();
    answer(updated);
  }

  private async patch(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
    name: string,
  ): Promise<void> {
    const contentType = mediaTypeOf(req, '');
    const text = await readBody(req);
    const { store, patches } = this.deps;
    const current = store.get(route.type, this.ns(route), name);
    const kind = { group: route.type.group, version: route.type.version, kind: route.type.kind };
    if (contentType === 'application/apply-patch+yaml') {
      return this.apply(req, res, url, route, name, text, current);
    }
    const known = [
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/json-patch+json',
    ];
    if (!known.includes(contentType)) throw unsupportedMediaType(route.type.crdName === undefined);
    if (!current) throw notFound(route.type, name);
    const patchBody = parseJsonBody(text);
    const result = runPatchEngine(route.type, name, () => {
      if (contentType === 'application/merge-patch+json') return patches.merge(current, patchBody);
      if (contentType === 'application/strategic-merge-patch+json')
        return patches.strategic(current, patchBody, kind);
      return patches.json(current, patchBody);
    });
    if (!isPlainObject(result) || !isPlainObject(result.metadata))
      throw badRequest('the patch produced an object without metadata');
    result.metadata.name = name;
    this.write(req, res, url, route, name, result, true);
  }

  private apply(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
    name: string,
    text: string,
    current: StoredObject | undefined,
  ): void {
    const manager = url.searchParams.get('fieldManager');
    if (!manager) {
      throw invalid({ plural: 'patchoptions', group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: is required for apply patch',
          field: 'fieldManager',
        },
      ]);
    }
    const applied = decodeYaml(text);
    if (!isPlainObject(applied)) throw badRequest('the apply patch must be an object');
    const obj = applied as StoredObject;
    if (!isPlainObject(obj.metadata)) obj.metadata = {};
    checkNameMatchesUrl(obj, name);
    const expected = apiVersionOf(route.type);
    const gv = typeof obj.apiVersion === 'string' ? parseApiVersion(obj.apiVersion) : undefined;
    if (!gv || gv.group !== route.type.group || obj.kind !== route.type.kind) {
      throw apiVersionMismatch(obj, expected);
    }
    obj.apiVersion = expected;
    const force = url.searchParams.get('force') === 'true';
    const status = route.subresource === 'status';
    if (!status && route.type.statusSubresource) delete obj.status;
    const outcome = runPatchEngine(route.type, name, () =>
      this.deps.patches.apply(current, obj, {
        manager,
        force,
        now: this.deps.clock.now(),
        ...(status ? { subresource: 'status' as const } : {}),
      }),
    );
    if (outcome.conflicts.length > 0 && !force) {
      throw applyConflict(route.type, name, formatApplyConflictMessage(outcome.conflicts), outcome.conflicts);
    }
    const result = outcome.object;
    result.metadata.name = name;
    if (!current) {
      if (status) throw notFound(route.type, name);
      // kube-apiserver authorizes an apply that creates as a create too (of the named object).
      const identity = requestIdentity.get(req);
      if (identity?.attrs.kind === 'resource')
        this.authorize(req, identity.user, { ...identity.attrs, verb: 'create' });
      return this.insert(req, res, url, route, result);
    }
    result.metadata.resourceVersion = obj.metadata.resourceVersion ?? current.metadata.resourceVersion;
    this.write(req, res, url, route, name, result, true, false);
  }

  /** GET, PUT and PATCH of `/scale`: only the replica count changes on the workload. */
  private async scale(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
    name: string,
    method: string,
  ): Promise<void> {
    const type = route.type;
    const scale = type.scale;
    if (!scale) throw notServed();
    const scaled = { ...type, scale };
    const current = this.deps.store.get(type, this.ns(route), name);
    if (!current) throw notFound(type, name);
    const view = toScale(scaled, current);
    if (method === 'GET') return sendJson(res, 200, view);
    let next: unknown;
    const text = await readBody(req);
    if (method === 'PUT') {
      next = parseJsonBody(text);
    } else if (method === 'PATCH') {
      const contentType = mediaTypeOf(req, '');
      const body = parseJsonBody(text);
      next = runPatchEngine(type, name, () => {
        if (contentType === 'application/json-patch+json')
          return this.deps.patches.json(view as StoredObject, body);
        if (
          contentType === 'application/merge-patch+json' ||
          contentType === 'application/strategic-merge-patch+json'
        )
          return this.deps.patches.merge(view as StoredObject, body);
        throw unsupportedMediaType(true);
      });
    } else {
      throw methodNotAllowed('the server does not allow this method on the requested resource');
    }
    const scaleObj = (isPlainObject(next) ? next : {}) as {
      metadata?: { resourceVersion?: string };
      spec?: { replicas?: unknown };
    };
    const replicas = scaleObj.spec?.replicas;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw invalid({ plural: 'scale', group: 'autoscaling', kind: 'Scale' }, name, [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${String(replicas)}: must be greater than or equal to 0`,
          field: 'spec.replicas',
        },
      ]);
    }
    const updated = withScale(scaled, current, replicas, scaleObj.metadata?.resourceVersion);
    this.write(req, res, url, { ...route, subresource: undefined }, name, updated, true, true, (obj) =>
      toScale(scaled, obj),
    );
  }

  /** POST `…/pods/{name}/eviction` (create is its only verb, as on a real server). */
  private async evict(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
    name: string,
    method: string,
  ): Promise<void> {
    if (method !== 'POST')
      throw methodNotAllowed('the server does not allow this method on the requested resource');
    const body = decodeTextBody(mediaTypeOf(req, 'application/json'), await readBody(req));
    const outcome = evictPod(
      {
        store: this.deps.store,
        registry: this.deps.registry,
        now: this.deps.clock.now(),
        deletePod: (namespace, podName, options) => {
          this.deleteOne(route.type, namespace, podName, options);
        },
      },
      { namespace: this.ns(route), name, body, dryRun: isDryRun(url) },
    );
    if (outcome.wrote) this.deps.onWrite();
    sendJson(res, outcome.code, outcome.body);
  }

  /**
   * POST `…/serviceaccounts/{name}/token` (kubectl create token): an authentication.k8s.io/v1 TokenRequest
   * answered with a bearer token that authenticates as the ServiceAccount.
   */
  private async requestToken(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    name: string,
    method: string,
  ): Promise<void> {
    if (method !== 'POST')
      throw methodNotAllowed('the server does not allow this method on the requested resource');
    const mediaType = mediaTypeOf(req, 'application/json');
    // kubectl create token sends its TokenRequest as protobuf.
    const body =
      mediaType === 'application/vnd.kubernetes.protobuf'
        ? decodeProtobufObject(await readRawBody(req))
        : decodeTextBody(mediaType, await readBody(req));
    const spec = isPlainObject(body) && isPlainObject(body.spec) ? body.spec : {};
    const seconds = spec.expirationSeconds ?? DEFAULT_TOKEN_SECONDS;
    const subject = { plural: 'tokenrequests', group: 'authentication.k8s.io', kind: 'TokenRequest' };
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < MIN_TOKEN_SECONDS)
      throw invalid(subject, name, [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${String(seconds)}: may not specify a duration less than 10 minutes`,
          field: 'spec.expirationSeconds',
        },
      ]);
    const namespace = this.ns(route);
    const minted = this.deps.serviceAccountTokens.mint(namespace, name, seconds);
    if (!minted) throw notFound(route.type, name);
    const audiences =
      Array.isArray(spec.audiences) && spec.audiences.length > 0
        ? spec.audiences
        : ['https://kubernetes.default.svc.cluster.local'];
    sendJson(res, 201, {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: null },
      spec: { audiences, expirationSeconds: seconds, boundObjectRef: null },
      status: { token: minted.token, expirationTimestamp: formatKubeTime(minted.expiresAt) },
    });
  }

  private async deleteOptions(req: IncomingMessage, url: URL): Promise<DeleteRequest> {
    const text = await readBody(req);
    const body = text.trim() === '' ? {} : parseJsonBody(text);
    const opts = isPlainObject(body) ? body : {};
    let policy = (url.searchParams.get('propagationPolicy') ?? opts.propagationPolicy) as string | undefined;
    const orphan = url.searchParams.get('orphanDependents') ?? opts.orphanDependents;
    if (policy === undefined && (orphan === true || orphan === 'true')) policy = 'Orphan';
    if (policy !== undefined && policy !== 'Background' && policy !== 'Foreground' && policy !== 'Orphan') {
      throw invalid({ plural: 'deleteoptions', group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
        {
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
          field: 'propagationPolicy',
        },
      ]);
    }
    const pre = isPlainObject(opts.preconditions)
      ? (opts.preconditions as { uid?: string; resourceVersion?: string })
      : undefined;
    const graceText = url.searchParams.get('gracePeriodSeconds') ?? opts.gracePeriodSeconds;
    const grace = graceText === undefined || graceText === null ? undefined : Number(graceText);
    return {
      ...(policy ? { propagationPolicy: policy as PropagationPolicy } : {}),
      ...(pre ? { preconditions: pre } : {}),
      ...(grace !== undefined && Number.isFinite(grace) ? { gracePeriodSeconds: Math.max(0, grace) } : {}),
    };
  }

  private defaultPolicy(type: ResourceType): PropagationPolicy {
    // batch/v1 Jobs still orphan their pods by default, as on a real cluster.
    return type.group === 'batch' && type.kind === 'Job' ? 'Orphan' : 'Background';
  }

  private async delete(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
    name: string,
  ): Promise<void> {
    const options = await this.deleteOptions(req, url);
    const policy = options.propagationPolicy ?? this.defaultPolicy(route.type);
    if (isDryRun(url)) {
      const obj = this.deps.store.get(route.type, this.ns(route), name);
      if (!obj) throw notFound(route.type, name);
      return this.respondObject(req, res, url, 200, route.type, obj);
    }
    const result = this.deleteOne(route.type, this.ns(route), name, {
      ...options,
      propagationPolicy: policy,
    });
    this.deps.onWrite();
    sendJson(res, result.outcome === 'deleted' ? 200 : 202, result.object);
  }

  /** Deletes one object, orphaning its dependents first when asked to. */
  deleteOne(
    type: ResourceType,
    namespace: string,
    name: string,
    options: DeleteRequest & { propagationPolicy: PropagationPolicy },
  ) {
    const { store } = this.deps;
    const current = store.get(type, namespace, name);
    if (!current) throw notFound(type, name);
    if (options.propagationPolicy === 'Orphan')
      orphanDependents(store, this.deps.registry, current.metadata.uid ?? '');
    return store.delete(type, namespace, name, options);
  }

  private async deleteCollection(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: Route,
  ): Promise<void> {
    const options = await this.deleteOptions(req, url);
    const policy = options.propagationPolicy ?? this.defaultPolicy(route.type);
    const matches = this.matcher(url);
    const victims = this.deps.store.list(route.type, route.namespace, matches);
    const deleted: StoredObject[] = [];
    if (!isDryRun(url)) {
      for (const v of victims) {
        deleted.push(
          this.deleteOne(route.type, v.metadata.namespace ?? '', v.metadata.name ?? '', {
            ...options,
            propagationPolicy: policy,
          }).object,
        );
      }
      this.deps.onWrite();
    }
    sendJson(res, 200, {
      kind: route.type.listKind,
      apiVersion: apiVersionOf(route.type),
      metadata: { resourceVersion: String(this.deps.store.resourceVersion) },
      items: isDryRun(url) ? victims : deleted,
    });
  }

  /** Starts listening; resolves with the bound address. */
  async listen(port: number, host: string): Promise<{ port: number; host: string }> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const address = this.server.address();
    if (address === null || typeof address === 'string')
      throw new Error('sandbox: server has no TCP address');
    return { port: address.port, host };
  }

  /** Stops accepting connections and closes open ones (watches included). */
  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** `name` of an object's metadata, or of a Status's details (a create answered 409 AlreadyExists). */
function nameIn(value: unknown): string | undefined {
  return isPlainObject(value) && typeof value.name === 'string' ? value.name : undefined;
}

function notFoundThrow(): never {
  throw notServed();
}

/** metav1.Time has second precision: clients that send `.000Z` (client-node does) must not look like a change. */
function normalizeMetaTimes(obj: StoredObject): void {
  const seconds = (v: unknown): unknown => {
    if (typeof v !== 'string') return v;
    const t = Date.parse(v);
    return Number.isNaN(t) ? v : formatKubeTime(t);
  };
  const meta = obj.metadata;
  if (meta.creationTimestamp !== undefined)
    meta.creationTimestamp = seconds(meta.creationTimestamp) as string;
  if (meta.deletionTimestamp !== undefined)
    meta.deletionTimestamp = seconds(meta.deletionTimestamp) as string;
  if (Array.isArray(meta.managedFields)) {
    for (const entry of meta.managedFields) {
      if (entry.time !== undefined) entry.time = seconds(entry.time) as string;
    }
  }
}

/** The field manager of a non-apply write: ?fieldManager=, else the client's user agent up to the first '/'. */
function fieldManagerOf(req: IncomingMessage, url: URL): string {
  const given = url.searchParams.get('fieldManager');
  if (given) return given;
  const agent = req.headers['user-agent'] ?? '';
  const prefix = agent.split('/')[0]?.trim() ?? '';
  return prefix === '' ? 'unknown' : prefix.slice(0, 128);
}

function includeObject(url: URL): IncludeObject {
  const v = url.searchParams.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

function isDryRun(url: URL): boolean {
  return url.searchParams.getAll('dryRun').includes('All');
}

/** A continue token: the key of the page's last object (the next page starts after it) and the list's version. */
function encodeContinue(after: string, resourceVersion: string): string {
  return Buffer.from(JSON.stringify({ after, resourceVersion })).toString('base64url');
}

function decodeContinue(token: string): { after: string; resourceVersion: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (
      isPlainObject(parsed) &&
      typeof parsed.after === 'string' &&
      typeof parsed.resourceVersion === 'string'
    ) {
      return { after: parsed.after, resourceVersion: parsed.resourceVersion };
    }
  } catch {
    // fall through to the error below
  }
  throw badRequest('continue key is not valid');
}

/** Removes ownerReferences to `uid` from every object (propagationPolicy=Orphan). */
export function orphanDependents(store: ObjectStore, registry: ResourceRegistry, uid: string): void {
  for (const { typeKey, object } of store.dependentsOf(uid)) {
    const refs = object.metadata.ownerReferences ?? [];
    const [groupName = '', kind = ''] = typeKey.split('/');
    const type = registry.anyVersionOfKind(groupName, kind);
    if (!type) continue;
    const next = structuredClone(object);
    next.metadata.ownerReferences = refs.filter((r) => r.uid !== uid);
    store.update(type, next, object.metadata.namespace ?? '');
  }
}
