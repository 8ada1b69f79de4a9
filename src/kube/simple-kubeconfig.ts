// The kubeconfig of a command, read without client-node when it is a simple one: one file, a context, a
// server, and a token, client certificate or password. Anything more (exec plugins, auth providers,
// proxies, impersonation, merged files, in-cluster) is left to client-node: the caller falls back.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { Cluster, User } from '@kubernetes/client-node';
import { parse } from 'yaml';

/**
 * The context's cluster and user as client-node loads them (file paths made absolute), and the namespace:
 * plain-kube-http.ts derives where to send and how to authenticate from them, as for the reconciler.
 */
export interface SimpleKubeconfig {
  /** The namespace of `-n`, else the context's, else `default`. */
  namespace: string;
  cluster: Cluster;
  user: User;
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

/**
 * A file field made absolute (relative to the kubeconfig's folder), and its inline data, as client-node
 * loads them; false when malformed or when the file is missing (client-node's error to give).
 */
function material(
  object: Record<string, unknown>,
  dataField: string,
  fileField: string,
  folder: string,
): { file: string | undefined; data: string | undefined } | false {
  const data = optionalString(object, dataField);
  const file = optionalString(object, fileField);
  if (data === false || file === false) return false;
  if (!file) return { file: undefined, data };
  const path = isAbsolute(file) ? file : join(folder, file);
  return existsSync(path) ? { file: path, data } : false;
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
  return {
    namespace: lookup.namespace ?? (namespace || 'default'),
    cluster: {
      name: String(context.cluster),
      server,
      caFile: ca.file,
      caData: ca.data,
      skipTLSVerify: skipTlsVerify,
      tlsServerName,
    },
    user: {
      name: String(context.user),
      certFile: cert.file,
      certData: cert.data,
      keyFile: key.file,
      keyData: key.data,
      token,
      username,
      password,
    },
  };
}
