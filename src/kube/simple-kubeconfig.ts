// The kubeconfig of a command, read without client-node when it is a simple one: one file, a context, a
// server, and a token, client certificate or password. Anything more (exec plugins, auth providers,
// proxies, impersonation, merged files, in-cluster) is left to client-node: the caller falls back.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

/** Where to reach the API server and how to authenticate, as client-node would from the same file. */
export interface SimpleKubeconfig {
  /** The cluster's `server`, without a trailing slash: request paths are appended to it. */
  server: string;
  /** The namespace of `-n`, else the context's, else `default`. */
  namespace: string;
  ca?: Buffer | undefined;
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
  /** `insecure-skip-tls-verify` */
  skipTlsVerify: boolean;
  tlsServerName?: string | undefined;
  /** The `Authorization` header, when the user has a token or a password. */
  authorization?: string | undefined;
}

/** What picks the kubeconfig: the same inputs as loadKubeConfig and useContext (client.ts). */
export interface SimpleKubeconfigLookup {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  namespace?: string | undefined;
  env?: NodeJS.ProcessEnv;
}

const CLUSTER_FIELDS = new Set([
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'insecure-skip-tls-verify',
  'tls-server-name',
]);
const USER_FIELDS = new Set([
  'token',
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'username',
  'password',
]);
const CONTEXT_FIELDS = new Set(['cluster', 'user', 'namespace']);

/** The one file loadKubeConfig would read, when it would read exactly one. */
function kubeconfigFile(lookup: SimpleKubeconfigLookup): string | undefined {
  const env = lookup.env ?? process.env;
  if (lookup.kubeconfig !== undefined && lookup.kubeconfig !== '') return lookup.kubeconfig;
  const envFiles = (env.KUBECONFIG ?? '').split(delimiter).filter((file) => file !== '');
  if (envFiles.length > 1) return undefined;
  if (envFiles.length === 1) return envFiles[0];
  return join(env.HOME ?? homedir(), '.kube', 'config');
}

type Entries = Array<Record<string, unknown>>;

/**
 * The `field` object of the entry called `name` in `list`, when every entry is well formed: client-node
 * refuses the whole file for one bad entry (a name missing, a cluster without a server), used or not.
 */
function entry(
  list: unknown,
  field: string,
  name: unknown,
  required?: string,
): Record<string, unknown> | undefined {
  if (!Array.isArray(list)) return undefined;
  const entries = list as Entries;
  const wellFormed = entries.every(
    (item) =>
      typeof item === 'object' &&
      item !== null &&
      typeof item.name === 'string' &&
      item.name !== '' &&
      typeof item[field] === 'object' &&
      item[field] !== null &&
      (required === undefined || Boolean((item[field] as Record<string, unknown>)[required])),
  );
  if (!wellFormed) return undefined;
  return entries.find((item) => item.name === name)?.[field] as Record<string, unknown> | undefined;
}

function onlyFields(object: Record<string, unknown>, allowed: Set<string>): boolean {
  return Object.keys(object).every((field) => allowed.has(field));
}

function optionalString(object: Record<string, unknown>, field: string): string | undefined | false {
  const value = object[field];
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : false;
}

/** The file (relative to the kubeconfig's folder), else inline base64 data: client-node's order. */
function material(
  object: Record<string, unknown>,
  dataField: string,
  fileField: string,
  folder: string,
): Buffer | undefined | false {
  const data = optionalString(object, dataField);
  const file = optionalString(object, fileField);
  if (data === false || file === false) return false;
  if (file) {
    const path = isAbsolute(file) ? file : join(folder, file);
    // A missing file is client-node's error to give.
    return existsSync(path) ? readFileSync(path) : false;
  }
  return data ? Buffer.from(data, 'base64') : undefined;
}

/**
 * The simple kubeconfig `lookup` names, or undefined whenever client-node must read it instead: a file
 * that is missing or malformed, a context not there, or any field beyond the simple ones. The fallback
 * keeps every error and every other kind of authentication exactly client-node's.
 */
export function readSimpleKubeconfig(lookup: SimpleKubeconfigLookup = {}): SimpleKubeconfig | undefined {
  const file = kubeconfigFile(lookup);
  if (file === undefined || !existsSync(file)) return undefined;
  let document: unknown;
  try {
    document = parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof document !== 'object' || document === null) return undefined;
  const config = document as Record<string, unknown>;
  const contextName =
    lookup.context !== undefined && lookup.context !== '' ? lookup.context : config['current-context'];
  const context = entry(config.contexts, 'context', contextName, 'cluster');
  if (context === undefined || !onlyFields(context, CONTEXT_FIELDS)) return undefined;
  const cluster = entry(config.clusters, 'cluster', context.cluster, 'server');
  const user = entry(config.users, 'user', context.user);
  if (cluster === undefined || user === undefined) return undefined;
  if (!onlyFields(cluster, CLUSTER_FIELDS) || !onlyFields(user, USER_FIELDS)) return undefined;

  const server = optionalString(cluster, 'server');
  const skip = cluster['insecure-skip-tls-verify'];
  if (skip !== undefined && typeof skip !== 'boolean') return undefined;
  const skipTlsVerify = skip === true;
  if (typeof server !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return undefined;
  }
  // client-node refuses plain HTTP unless TLS verification is off: its error, from its path.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && skipTlsVerify)) return undefined;

  const folder = dirname(file);
  const ca = material(cluster, 'certificate-authority-data', 'certificate-authority', folder);
  const cert = material(user, 'client-certificate-data', 'client-certificate', folder);
  const key = material(user, 'client-key-data', 'client-key', folder);
  const tlsServerName = optionalString(cluster, 'tls-server-name');
  const namespace = optionalString(context, 'namespace');
  const token = optionalString(user, 'token');
  const username = optionalString(user, 'username');
  const password = optionalString(user, 'password');
  if (
    ca === false ||
    cert === false ||
    key === false ||
    tlsServerName === false ||
    namespace === false ||
    token === false ||
    username === false ||
    password === false
  )
    return undefined;
  // As client-node: a password first, a token over it.
  let authorization: string | undefined;
  if (username) authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  if (token) authorization = `Bearer ${token}`;
  return {
    server: server.replace(/\/$/, ''),
    namespace: lookup.namespace ?? (namespace || 'default'),
    ca,
    cert,
    key,
    skipTlsVerify,
    tlsServerName: tlsServerName || undefined,
    authorization,
  };
}
