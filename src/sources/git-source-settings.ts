// A GitSource object → the settings of its source (the SourceConfig shape), or the problems that keep it from running. Pure.
import { LOCAL_CLUSTER } from '../clusters/cluster-set.ts';
import type { SourceConfig } from '../config/index.ts';
import { MIN_INLINE_SECRET_LENGTH } from '../config/schema.ts';
import { isDuration, parseDuration } from '../manifest/duration.ts';
import { gitSourceSpecSchema, PRUNE_FINALIZER, type GitSourceSpec } from '../manifest/git-source.ts';

/**
 * Why a GitSource is not Ready (its `Ready` condition's reason): `InvalidSpec` (a field the parser
 * refuses), `ScopeNotAllowed` (a tenant asking for more than its namespace), `UnsupportedRef` (tag or
 * commit: not followed yet), `CredentialsNotFound` (a Secret or key it names is missing).
 */
export type NotReadyReason = 'InvalidSpec' | 'ScopeNotAllowed' | 'UnsupportedRef' | 'CredentialsNotFound';

/** One thing wrong with the object, naming its field (`spec.ref`, `spec.scope.clusterScoped`, …). */
export interface SpecProblem {
  reason: NotReadyReason;
  field: string;
  message: string;
}

/** The settings of an object source: SourceConfig plus the fields other parts of issue 30 read. */
/** An object source's settings: the config's shape (its `dependsOn` holds internal `<namespace>.<name>` names). */
export type SourceSettings = SourceConfig;

/** A Secret the source reads, always in the object's own namespace. */
export interface SecretNeed {
  namespace: string;
  name: string;
}

/** A GitSource whose spec is usable, before its Secrets are read. */
export interface ParsedGitSource {
  ok: true;
  /** `<namespace>.<name>`: names its state ConfigMap, cache folder, logs, metrics and labels. */
  source: string;
  namespace: string;
  name: string;
  generation: number | undefined;
  /** The settings with no credentials yet ({@link withSecrets} adds them). */
  settings: SourceSettings;
  credentials?: SecretNeed;
  webhook?: SecretNeed & { key: string };
  pruneOnDelete: boolean;
  /** Set while the object is being deleted. */
  deleting: boolean;
  finalizers: string[];
}

/** A GitSource that cannot run, and why. */
export interface RefusedGitSource {
  ok: false;
  source: string;
  namespace: string;
  name: string;
  generation: number | undefined;
  problems: SpecProblem[];
  pruneOnDelete: boolean;
  deleting: boolean;
  finalizers: string[];
}

export type GitSourceReading = ParsedGitSource | RefusedGitSource;

/** What a parse needs besides the object. */
export interface GitSourceContext {
  /** kubernetes.stateNamespace: objects here are written by platform admins and may widen their scope. */
  controlNamespace: string;
  /** The local cluster's name (a tenant's GitSource may target no other); default `in-cluster`. */
  localCluster?: string;
}

/** The internal name of an object source; config names are DNS labels (no dot), so the two never meet. */
export function objectSourceName(namespace: string, name: string): string {
  return `${namespace}.${name}`;
}

/**
 * The longest internal name: it is the value of the `rollgate.dev/source` label on everything the source
 * applies, and a label value holds at most 63 characters.
 */
export const MAX_SOURCE_NAME = 63;

function nameProblems(source: string): SpecProblem[] {
  if (source.length <= MAX_SOURCE_NAME) return [];
  return [
    {
      reason: 'InvalidSpec',
      field: 'metadata.name',
      message: `the namespace and name together must be at most ${MAX_SOURCE_NAME - 1} characters (its objects are labelled rollgate.dev/source=<namespace>.<name>, ${source.length} here)`,
    },
  ];
}

/** The webhook Secret key read when the reference names none. */
export const DEFAULT_WEBHOOK_KEY = 'secret';

const RBAC_KINDS = /^(rbac\.authorization\.k8s\.io\/)?(Role|RoleBinding|ClusterRole|ClusterRoleBinding)$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

interface RawObject {
  metadata?: {
    name?: unknown;
    namespace?: unknown;
    generation?: unknown;
    deletionTimestamp?: unknown;
    finalizers?: unknown;
  };
  spec?: unknown;
}

/** zod's path as the object's field: `spec.ref.branch`, `spec.dependsOn[0].name`. */
function fieldOf(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>(
    (text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}.${String(key)}`),
    'spec',
  );
}

/** Reads one GitSource object (as the API server sends it). Never throws: a bad spec is problems. */
export function readGitSource(raw: unknown, context: GitSourceContext): GitSourceReading {
  const object = (typeof raw === 'object' && raw !== null ? raw : {}) as RawObject;
  const metadata = object.metadata ?? {};
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  const generation = typeof metadata.generation === 'number' ? metadata.generation : undefined;
  const finalizers = Array.isArray(metadata.finalizers)
    ? metadata.finalizers.filter((f): f is string => typeof f === 'string')
    : [];
  const base = {
    source: objectSourceName(namespace, name),
    namespace,
    name,
    generation,
    deleting: metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null,
    finalizers,
  };
  const refused = (problems: SpecProblem[], pruneOnDelete = false): RefusedGitSource => ({
    ok: false,
    ...base,
    problems,
    pruneOnDelete,
  });
  const parsed = gitSourceSpecSchema.safeParse(object.spec ?? {});
  if (!parsed.success)
    return refused(
      parsed.error.issues.map((issue) => ({
        reason: 'InvalidSpec',
        field: fieldOf(issue.path),
        message: issue.message,
      })),
      finalizers.includes(PRUNE_FINALIZER),
    );
  const spec = parsed.data;
  const pruneOnDelete = spec.pruneOnDelete === true;
  const problems = [
    ...nameProblems(base.source),
    ...specProblems(spec),
    ...tenancyProblems(spec, namespace, context),
  ];
  if (problems.length > 0) return refused(problems, pruneOnDelete);
  return {
    ok: true,
    ...base,
    settings: settingsOf(spec, base.source, namespace),
    ...(spec.credentials ? { credentials: { namespace, name: spec.credentials.secretRef.name } } : {}),
    ...(spec.webhook
      ? {
          webhook: {
            namespace,
            name: spec.webhook.secretRef.name,
            key: spec.webhook.secretRef.key ?? DEFAULT_WEBHOOK_KEY,
          },
        }
      : {}),
    pruneOnDelete,
  };
}

/** The checks the CRD's schema cannot make: one ref, URL form, durations, names. */
function specProblems(spec: GitSourceSpec): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const invalid = (field: string, message: string): void => {
    problems.push({ reason: 'InvalidSpec', field, message });
  };
  if (!/^https?:\/\//.test(spec.url) && !/^file:\/\//.test(spec.url) && !spec.url.startsWith('/'))
    invalid('spec.url', `must be an http(s) URL, got ${JSON.stringify(spec.url)}`);
  const refs = Object.entries(spec.ref ?? {}).filter(([, v]) => v !== undefined);
  if (refs.length > 1)
    invalid('spec.ref', `give exactly one of branch, tag, commit (got ${refs.map(([k]) => k).join(', ')})`);
  else if (spec.ref?.tag !== undefined)
    problems.push({
      reason: 'UnsupportedRef',
      field: 'spec.ref.tag',
      message: 'following a tag is not supported yet: give spec.ref.branch',
    });
  else if (spec.ref?.commit !== undefined)
    problems.push({
      reason: 'UnsupportedRef',
      field: 'spec.ref.commit',
      message: 'following a fixed commit is not supported yet: give spec.ref.branch',
    });
  for (const key of ['interval', 'syncTimeout'] as const) {
    const value = spec[key];
    if (value !== undefined && !(isDuration(value) && parseDuration(value) > 0))
      invalid(
        `spec.${key}`,
        `must be a duration above zero such as "30s", "5m", "1h" or a whole number of seconds, got ${JSON.stringify(value)}`,
      );
  }
  if (spec.serviceAccountName !== undefined && !DNS_LABEL.test(spec.serviceAccountName))
    invalid('spec.serviceAccountName', 'must be a ServiceAccount name (lowercase letters, digits, -)');
  const insecure = /^http:\/\//i.test(spec.url) && !isLoopbackUrl(spec.url);
  if (insecure && spec.credentials !== undefined && spec.allowInsecureHttp !== true)
    invalid(
      'spec.url',
      "the source's credentials would be sent in clear over http://; use https:// or set spec.allowInsecureHttp: true",
    );
  return problems;
}

function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
  } catch {
    return false;
  }
}

/**
 * The tenancy rule: an object outside the control namespace is confined to its own namespace. Asking
 * for more (other namespaces, cluster-scoped kinds, RBAC kinds, another namespace's source to wait
 * for is fine: it only reads its status) is a problem, never honoured.
 */
function tenancyProblems(spec: GitSourceSpec, namespace: string, context: GitSourceContext): SpecProblem[] {
  if (namespace === context.controlNamespace) return [];
  const problems: SpecProblem[] = [];
  const refuse = (field: string, message: string): void => {
    problems.push({ reason: 'ScopeNotAllowed', field, message });
  };
  // A tenant's namespace is a namespace of the local cluster: its GitSource may not write to another cluster,
  // where the same namespace name may belong to someone else.
  if (spec.cluster !== undefined && spec.cluster !== (context.localCluster ?? LOCAL_CLUSTER))
    refuse(
      'spec.cluster',
      `a GitSource outside ${context.controlNamespace} applies to the local cluster only (asked for ${spec.cluster})`,
    );
  const outside = (spec.scope?.namespaces ?? []).filter((ns) => ns !== namespace);
  if (outside.length > 0)
    refuse(
      'spec.scope.namespaces',
      `a GitSource outside ${context.controlNamespace} writes to its own namespace only (asked for ${outside.join(', ')})`,
    );
  if ((spec.scope?.clusterScoped ?? []).length > 0)
    refuse(
      'spec.scope.clusterScoped',
      `a GitSource outside ${context.controlNamespace} may not write cluster-scoped kinds`,
    );
  const rbac = (spec.scope?.kinds?.allow ?? []).filter((kind) => RBAC_KINDS.test(kind));
  if (rbac.length > 0)
    refuse(
      'spec.scope.kinds.allow',
      `a GitSource outside ${context.controlNamespace} may not allow RBAC kinds (${rbac.join(', ')})`,
    );
  return problems;
}

function settingsOf(spec: GitSourceSpec, source: string, namespace: string): SourceSettings {
  const allow = spec.scope?.kinds?.allow;
  return {
    name: source,
    url: spec.url,
    branch: spec.ref?.branch ?? 'main',
    path: spec.path ?? '.',
    ...(spec.cluster !== undefined ? { cluster: spec.cluster } : {}),
    interval: spec.interval ?? '30s',
    namespace,
    prune: spec.prune ?? false,
    selfHeal: spec.selfHeal ?? false,
    scope: {
      namespaces: spec.scope?.namespaces ?? [],
      clusterScoped: spec.scope?.clusterScoped ?? [],
      kinds: { ...(allow !== undefined ? { allow } : {}), deny: spec.scope?.kinds?.deny ?? [] },
    },
    adopt: spec.adopt ?? 'none',
    render: spec.render ?? 'auto',
    allowInsecureHttp: spec.allowInsecureHttp ?? false,
    ...(spec.serviceAccountName !== undefined ? { serviceAccountName: spec.serviceAccountName } : {}),
    ...(spec.dependsOn !== undefined
      ? { dependsOn: spec.dependsOn.map((d) => objectSourceName(d.namespace ?? namespace, d.name)) }
      : {}),
    syncTimeout: spec.syncTimeout ?? '5m',
  };
}

/** A Secret's data as read (base64 values), or undefined when it does not exist. */
export type SecretData = Readonly<Record<string, string>> | undefined;

const decode = (value: string | undefined): string | undefined =>
  value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');

/**
 * The settings with the credentials of the Secrets the spec names, or the problem when one is missing.
 * `secrets` maps `namespace/name` to what was read. The values go into the settings only: never a log
 * or a status.
 */
export function withSecrets(
  parsed: ParsedGitSource,
  secrets: ReadonlyMap<string, SecretData>,
): { ok: true; settings: SourceSettings; webhookSecret?: string } | { ok: false; problem: SpecProblem } {
  let settings = parsed.settings;
  if (parsed.credentials) {
    const { namespace, name } = parsed.credentials;
    const data = secrets.get(`${namespace}/${name}`);
    if (data === undefined)
      return {
        ok: false,
        problem: {
          reason: 'CredentialsNotFound',
          field: 'spec.credentials.secretRef.name',
          message: `Secret ${namespace}/${name} not found (or Rollgate may not read it: docs/security.md)`,
        },
      };
    const username = decode(data['username']);
    const password = decode(data['password']);
    const token = decode(data['token']);
    if (password === undefined && token === undefined)
      return {
        ok: false,
        problem: {
          reason: 'CredentialsNotFound',
          field: 'spec.credentials.secretRef.name',
          message: `Secret ${namespace}/${name} has neither a password nor a token key`,
        },
      };
    settings = {
      ...settings,
      auth: {
        ...(username !== undefined ? { username } : {}),
        ...(password !== undefined ? { password } : {}),
        ...(token !== undefined ? { token } : {}),
      },
    };
  }
  let webhookSecret: string | undefined;
  if (parsed.webhook) {
    const { namespace, name, key } = parsed.webhook;
    webhookSecret = decode(secrets.get(`${namespace}/${name}`)?.[key]);
    if (webhookSecret === undefined)
      return {
        ok: false,
        problem: {
          reason: 'CredentialsNotFound',
          field: 'spec.webhook.secretRef',
          message: `Secret ${namespace}/${name} not found or has no key ${key}`,
        },
      };
    // The receiver's HMAC (or token) is all that stands between a caller and this source's polls.
    if (webhookSecret.length < MIN_INLINE_SECRET_LENGTH)
      return {
        ok: false,
        problem: {
          reason: 'InvalidSpec',
          field: 'spec.webhook.secretRef',
          message: `the webhook secret in key ${key} of Secret ${namespace}/${name} has ${webhookSecret.length} characters; at least ${MIN_INLINE_SECRET_LENGTH} are needed`,
        },
      };
  }
  return { ok: true, settings, ...(webhookSecret !== undefined ? { webhookSecret } : {}) };
}

/** Whether the object's finalizers should change: the prune finalizer present iff pruneOnDelete. */
export function finalizersWanted(reading: GitSourceReading): string[] | undefined {
  const has = reading.finalizers.includes(PRUNE_FINALIZER);
  // A deleted object's finalizers are the deletion's business (see the registry's prune on delete).
  if (reading.deleting) return undefined;
  if (reading.pruneOnDelete && !has) return [...reading.finalizers, PRUNE_FINALIZER];
  if (!reading.pruneOnDelete && has) return reading.finalizers.filter((f) => f !== PRUNE_FINALIZER);
  return undefined;
}
