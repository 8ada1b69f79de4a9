// The Kubernetes API requests Rollgate's processes make, derived from the source: the typed client calls,
// the custom-object calls, the watch paths, and the kinds the sync applies (those in examples/).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROLLGATE_API_GROUP, toRollgateApiVersion } from '../../../src/manifest/api-version.ts';
import { ROLLGATE_API } from '../../../src/manifest/driven-api.ts';
import type { RouteResource } from '../../../src/traffic/route-edit.ts';
import { TRAFFIC_PROVIDERS } from '../../../src/traffic/traffic-providers.ts';

/** One (group, resource[/subresource], verb) an RBAC rule must allow, and where the code asks for it. */
export interface ApiRequest {
  group: string;
  resource: string;
  verb: string;
  where: string;
}

const ROOT = join(import.meta.dirname, '..', '..', '..');

/**
 * Code that never runs as the installed ServiceAccount: the sandbox is the API server itself, the demo
 * drives its own sandbox, and the CLI runs with the credentials of the person typing it. The rollout
 * verbs (src/views/rollout-commands.ts) do run as the ServiceAccount: the dashboard's POST verbs call them.
 */
const NOT_THE_CONTROLLER = ['src/sandbox/', 'src/demo/', 'src/cli/'];

const CLIENT_GROUPS: Record<string, string> = {
  core: '',
  apps: 'apps',
  batch: 'batch',
  events: 'events.k8s.io',
  apiextensions: 'apiextensions.k8s.io',
};

const VERB_OF_METHOD: [prefix: string, verb: string][] = [
  ['read', 'get'],
  ['get', 'get'],
  ['list', 'list'],
  ['create', 'create'],
  ['replace', 'update'],
  ['patch', 'patch'],
  ['delete', 'delete'],
];

/** Subresources named by the tail of a typed client method (createNamespacedPodEviction → pods/eviction). */
const SUBRESOURCE_SUFFIXES: [suffix: string, subresource: string][] = [
  ['Eviction', 'eviction'],
  ['Status', 'status'],
  ['Scale', 'scale'],
];

// Kubernetes' own rule for the kinds in play: a kind ending in s (Ingress) takes -es.
const pluralOf = (kind: string): string => `${kind.toLowerCase()}${kind.endsWith('s') ? 'es' : 's'}`;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function verbOf(method: string): [verb: string, rest: string] | undefined {
  for (const [prefix, verb] of VERB_OF_METHOD)
    if (method.startsWith(prefix) && /[A-Z]/.test(method[prefix.length] ?? ''))
      return [verb, method.slice(prefix.length)];
  return undefined;
}

/**
 * A string constant the file imports (`import { GIT_SOURCE_PLURAL } from '../manifest/git-source.ts'`),
 * read where it is exported, so the code names a resource once and the check still sees it.
 */
function importedConstant(file: string, text: string, name: string): string | undefined {
  for (const match of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(\.[^']+)'/g)) {
    const names = match[1]!.split(',').map((part) => part.trim().replace(/^type\s+/, ''));
    const imported = names
      .map((part) => /^(\w+)(?:\s+as\s+(\w+))?$/.exec(part))
      .find((parsed) => parsed !== null && (parsed[2] ?? parsed[1]) === name);
    if (!imported) continue;
    const from = readFileSync(join(dirname(join(ROOT, file)), match[2]!), 'utf8');
    return new RegExp(`export const ${imported[1]!} = '([^']*)'`).exec(from)?.[1];
  }
  return undefined;
}

/**
 * A string constant of the file (`const PLURAL = 'rollouts'`) or one it imports, or the identifier itself
 * when not found.
 */
function resolve(file: string, text: string, expression: string): string {
  const literal = /^'([^']*)'$/.exec(expression);
  if (literal) return literal[1]!;
  if (expression === 'ROLLGATE_API_GROUP') return ROLLGATE_API_GROUP;
  // A driven API's fields (`api.group`, `this.api.plurals.rollouts`): the default install drives
  // rollgate.dev; argoproj.io's rules come with the controller-mode overlay (docs/controller-mode.md).
  const driven = /^(?:this\.)?api\.(group|plural|plurals\.(\w+))$/.exec(expression);
  if (driven)
    return driven[1] === 'group'
      ? ROLLGATE_API.group
      : // `api.plural`: the fleet controller's Rollout API (src/fleet/observe-fleet.ts), Rollouts of the driven group.
        ROLLGATE_API.plurals[(driven[2] ?? 'rollouts') as keyof typeof ROLLGATE_API.plurals];
  const constant = new RegExp(`const ${expression} = '([^']*)'`).exec(text);
  if (constant) return constant[1]!;
  return /^\w+$/.test(expression) ? (importedConstant(file, text, expression) ?? expression) : expression;
}

/** Typed client calls: `clients.apps.patchNamespacedReplicaSet(`, `this.core.createNamespacedEvent(`. */
function typedClientRequests(file: string, text: string): ApiRequest[] {
  const found: ApiRequest[] = [];
  for (const match of text.matchAll(/\b(?:clients|this)\.(core|apps|batch|events|apiextensions)\.(\w+)\(/g)) {
    const parsed = verbOf(match[2]!);
    if (!parsed) continue;
    const [verb, rest] = parsed;
    // listReplicaSetForAllNamespaces: a cluster-wide list of the kind (the same RBAC resource).
    let kind = rest.replace(/^Namespaced/, '').replace(/ForAllNamespaces$/, '');
    let subresource = '';
    for (const [suffix, sub] of SUBRESOURCE_SUFFIXES)
      if (kind.endsWith(suffix) && kind !== suffix) {
        kind = kind.slice(0, -suffix.length);
        subresource = `/${sub}`;
      }
    const request = { group: CLIENT_GROUPS[match[1]!]!, resource: pluralOf(kind) + subresource, where: file };
    found.push({ ...request, verb });
    // A server-side apply that creates the object is also authorized as `create` (with the object's name).
    if (verb === 'patch' && text.includes('APPLY_PATCH')) found.push({ ...request, verb: 'create' });
  }
  return found;
}

/** Custom-object calls: `custom.listClusterCustomObject({ group: …, plural: … })`. */
function customObjectRequests(file: string, text: string): ApiRequest[] {
  const found: ApiRequest[] = [];
  for (const match of text.matchAll(
    /\.custom\.(\w+?)(?:Namespaced|Cluster)CustomObject(Status)?\(\s*\{([^}]*)\}/g,
  )) {
    const verb = verbOf(`${match[1]!}X`)?.[0];
    const body = match[3]!;
    const group = /group:\s*([\w']+[.\w']*)/.exec(body)?.[1];
    const plural = /plural:\s*([\w'.]+)/.exec(body)?.[1];
    if (!verb || !group || !plural)
      throw new Error(`${file}: cannot read the custom-object call ${match[0]}`);
    const resource = resolve(file, text, plural) + (match[2] ? '/status' : '');
    found.push({ group: resolve(file, text, group), resource, verb, where: file });
  }
  // A call written another way (its arguments in a variable, say) must not slip past the RBAC check.
  const calls = text.match(/\.custom\.\w+CustomObject\w*\(/g)?.length ?? 0;
  if (calls !== found.length)
    throw new Error(`${file}: read ${found.length} of ${calls} custom-object calls`);
  return found;
}

/**
 * Watches (src/kube/watch-with-restart.ts) on paths like `/apis/apps/v1/replicasets`, or
 * `/api/v1/pods` for the core group.
 */
function watchRequests(file: string, text: string): ApiRequest[] {
  if (!text.includes('watchWithRestart(')) return [];
  const found: ApiRequest[] = [];
  for (const match of text.matchAll(/_PATH = [`'](\/apis\/[^/]+\/v\w+\/\w+)[`']/g)) {
    const [, , groupExpression, , resource] = match[1]!.split('/');
    const group = groupExpression === '${ROLLGATE_API_GROUP}' ? ROLLGATE_API_GROUP : groupExpression!;
    found.push({ group, resource: resource!, verb: 'watch', where: file });
  }
  // A driven API's collections (`drivenPath(api, 'rollouts')`), in rollgate.dev for the default install.
  for (const match of text.matchAll(/drivenPath\(api, '(\w+)'\)/g))
    found.push({
      group: ROLLGATE_API.group,
      resource: ROLLGATE_API.plurals[match[1] as keyof typeof ROLLGATE_API.plurals],
      verb: 'watch',
      where: file,
    });
  for (const match of text.matchAll(/_PATH = [`']\/api\/v1\/(\w+)[`']/g))
    found.push({ group: '', resource: match[1]!, verb: 'watch', where: file });
  return found;
}

/**
 * Where a client is made outside the typed clients read above: the dynamic client of the sync (its verbs
 * are {@link SYNC_VERBS}), the health check's reader of what the sync applied (`list`, and `get` where a
 * list is refused: within SYNC_VERBS; its discovery `GET /apis` is a non-resource URL every authenticated
 * identity may read), the watches, and the `/version` check (a non-resource URL too). A new one must be
 * looked at, and added here with what it requests.
 */
const OTHER_CLIENTS = [
  'src/kube/client.ts',
  'src/sync/object-applier.ts',
  'src/sync/live-object-reader.ts',
  'src/kube/watch-with-restart.ts',
  'src/process/dependency-monitor.ts',
  'src/reconciler/route-writer.ts',
  // The prune of a deleted GitSource reads the API groups' preferred versions (`GET /apis`: a
  // non-resource URL every authenticated identity may read); its deletes go through the applier.
  'src/sync/source-removal.ts',
];
const ROUTE_WRITER = 'src/reconciler/route-writer.ts';

/**
 * The traffic routers' writes (src/reconciler/route-writer.ts): each object of every provider's table row is read
 * and replaced (in each group a resource may be served as); only the objects a router owns (its row's `creates`: the SMI TrafficSplit, NGINX's canary
 * Ingresses, Ambassador's canary Mappings) are also created, and those in `deletes` (the canary Mappings) deleted. Its API discovery (`GET /apis`) is a non-resource URL every authenticated
 * identity may read.
 */
function routerRequests(): ApiRequest[] {
  const id = (r: RouteResource) => `${r.group}/${r.plural}`;
  const resources = new Map(TRAFFIC_PROVIDERS.flatMap((p) => p.resources).map((r) => [id(r), r]));
  const created = new Set(TRAFFIC_PROVIDERS.flatMap((p) => p.creates).map(id));
  const deleted = new Set(TRAFFIC_PROVIDERS.flatMap((p) => p.deletes ?? []).map(id));
  // A resource's `alsoServedAs` groups (Traefik v2's) are read and replaced the same way.
  return [...resources.values()].flatMap((resource) =>
    [resource.group, ...(resource.alsoServedAs ?? []).map((also) => also.group)].flatMap((group) =>
      [
        ...['get', 'update'],
        ...(created.has(id(resource)) ? ['create'] : []),
        ...(deleted.has(id(resource)) ? ['delete'] : []),
      ].map((verb) => ({
        group,
        resource: resource.plural,
        verb,
        where: 'src/reconciler/route-writer.ts',
      })),
    ),
  );
}

/**
 * Impersonation (src/kube/impersonation.ts): a source with serviceAccountName sends `Impersonate-User`
 * with a ServiceAccount's user name, which the API server authorizes as `impersonate` on
 * `serviceaccounts` (in its namespace, by name). A person signed in to the dashboard is sent as their
 * user and groups: `impersonate` on `users` and `groups` (granted by deploy/components/dashboard-sign-in
 * only, see {@link SIGN_IN_REQUESTS}).
 */
function impersonationRequests(file: string, text: string): ApiRequest[] {
  if (!text.includes("'Impersonate-User'")) return [];
  const found = [{ group: '', resource: 'serviceaccounts', verb: 'impersonate', where: file }];
  if (text.includes("'Impersonate-Group'"))
    found.push(
      { group: '', resource: 'users', verb: 'impersonate', where: file },
      { group: '', resource: 'groups', verb: 'impersonate', where: file },
    );
  return found;
}

/** SubjectAccessReviews (the dashboard's review of what a signed-in person may read). */
function accessReviewRequests(file: string, text: string): ApiRequest[] {
  return text.includes('.createSubjectAccessReview(')
    ? [{ group: 'authorization.k8s.io', resource: 'subjectaccessreviews', verb: 'create', where: file }]
    : [];
}

/**
 * What only dashboard sign-in (dashboard.oidc) asks for, granted by the component
 * deploy/components/dashboard-sign-in and by no install on its own.
 */
export const SIGN_IN_REQUESTS = [
  { group: '', resource: 'users', verb: 'impersonate' },
  { group: '', resource: 'groups', verb: 'impersonate' },
  { group: 'authorization.k8s.io', resource: 'subjectaccessreviews', verb: 'create' },
];

/** The requests Rollgate's own processes make, from the code in src/. */
export function controllerRequests(): ApiRequest[] {
  return sourceFiles(join(ROOT, 'src'))
    .flatMap((path) => {
      const file = relative(ROOT, path);
      if (NOT_THE_CONTROLLER.some((prefix) => file.startsWith(prefix))) return [];
      const text = readFileSync(path, 'utf8');
      if (/makeApiClient|KubernetesObjectApi|new Watch\(/.test(text) && !OTHER_CLIENTS.includes(file))
        throw new Error(`${file} makes its own API client: list what it requests in api-requests-in-code.ts`);
      return [
        ...typedClientRequests(file, text),
        // The route writer's group and plural come from the provider table: routerRequests() lists them.
        ...(file === ROUTE_WRITER ? [] : customObjectRequests(file, text)),
        ...watchRequests(file, text),
        ...impersonationRequests(file, text),
        ...accessReviewRequests(file, text),
      ];
    })
    .concat(routerRequests());
}

/** The verbs src/sync/object-applier.ts uses on any kind it applies from Git (read, apply, generateName, prune). */
export const SYNC_VERBS = ['get', 'list', 'create', 'patch', 'delete'] as const;

// A kustomization is what the render reads, never an object the sync applies (its patches name kinds that
// the rendered output holds anyway).
const KUSTOMIZATION_FILE = /(^|\/)kustomization\.ya?ml$/;

/** The kinds the sync applies by default: every kind in examples/, as the cluster serves it. */
export function syncRequests(): ApiRequest[] {
  const files = readdirSync(join(ROOT, 'examples'), { recursive: true, encoding: 'utf8' }).filter(
    (f) => /\.ya?ml$/.test(f) && !KUSTOMIZATION_FILE.test(f),
  );
  const kinds = new Map<string, ApiRequest>();
  for (const file of files)
    for (const doc of parseAllDocuments(readFileSync(join(ROOT, 'examples', file), 'utf8'))) {
      const object = doc.toJS() as { apiVersion?: string; kind?: string } | null;
      if (!object?.apiVersion || !object.kind) continue;
      const apiVersion = String((toRollgateApiVersion(object) as { apiVersion: string }).apiVersion);
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
      kinds.set(`${group}/${object.kind}`, {
        group,
        resource: pluralOf(object.kind),
        verb: '',
        where: `examples/${file}`,
      });
    }
  return [...kinds.values()].flatMap((kind) => SYNC_VERBS.map((verb) => ({ ...kind, verb })));
}
