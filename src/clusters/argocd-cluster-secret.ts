// Argo CD's cluster Secret format (label argocd.argoproj.io/secret-type: cluster) read into a cluster registration, or the problems that keep it out.
import { X509Certificate } from 'node:crypto';

/** The label Argo CD puts on a cluster Secret, and its value. */
export const ARGOCD_SECRET_TYPE_LABEL = 'argocd.argoproj.io/secret-type';
export const ARGOCD_CLUSTER_SECRET_TYPE = 'cluster';
/** The label selector that finds Argo CD cluster Secrets. */
export const ARGOCD_CLUSTER_SELECTOR = `${ARGOCD_SECRET_TYPE_LABEL}=${ARGOCD_CLUSTER_SECRET_TYPE}`;

/**
 * How to reach one cluster: its address and the credentials to present. Holds a token or a key: never
 * log it, never put it in a status, an Event or an error message.
 */
export interface ClusterConnectionSpec {
  name: string;
  server: string;
  bearerToken?: string | undefined;
  /** Base64 of the PEM bundle the server's certificate must chain to (Argo's `caData`). */
  caData?: string | undefined;
  /** Base64 of the client certificate and key (PEM), for TLS client authentication. */
  certData?: string | undefined;
  keyData?: string | undefined;
  /** Skip verifying the server's certificate (Argo's `insecure`). */
  insecure: boolean;
  /** The name the server's certificate must carry, when not the server URL's host. */
  serverName?: string | undefined;
}

/** Where a Secret is, for messages and Events (never its content). */
export interface SecretRef {
  namespace: string;
  name: string;
  uid?: string | undefined;
}

/** A Secret as the API returns it (only what the parser reads). */
export interface ClusterSecretObject {
  metadata?: {
    name?: string | undefined;
    namespace?: string | undefined;
    uid?: string | undefined;
    labels?: Record<string, string> | undefined;
  };
  /** Base64 values, as read from the API server. */
  data?: Record<string, string> | undefined;
  /** Plain values (only on objects not yet written: the API server folds them into `data`). */
  stringData?: Record<string, string> | undefined;
}

/** The Secret read: a usable registration, or the cluster name it claims and why it cannot be used. */
export type ParsedClusterSecret =
  | { readonly ok: true; readonly secret: SecretRef; readonly spec: ClusterConnectionSpec }
  | { readonly ok: false; readonly secret: SecretRef; readonly name: string; readonly problems: string[] };

/**
 * A cluster name from a Secret: Argo CD allows any string, Rollgate needs one it can put in queue names,
 * readiness check names and metric labels: lowercase letters, digits, `-` and `.` (a DNS-1123 subdomain).
 */
const SECRET_CLUSTER_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const MAX_NAME = 253;

/** Fields of Argo CD's cluster `config` JSON Rollgate reads. */
const SUPPORTED_CONFIG = new Set(['bearerToken', 'tlsClientConfig', 'disableCompression']);
/** Argo CD fields Rollgate does not act on, and what each is, for the `unsupported:` message. */
const UNSUPPORTED_CONFIG: Readonly<Record<string, string>> = {
  awsAuthConfig: 'awsAuthConfig (EKS IAM authentication)',
  execProviderConfig: 'execProviderConfig (exec credential plugins)',
  username: 'username (basic authentication)',
  password: 'password (basic authentication)',
  proxyUrl: 'proxyUrl (a proxy to the API server)',
};
const TLS_FIELDS = new Set(['caData', 'certData', 'keyData', 'insecure', 'serverName']);
/** Secret keys Argo CD reads that only concern Argo CD's own permissions and sharding: accepted, not used. */
const ARGOCD_ONLY_KEYS = new Set(['namespaces', 'clusterResources', 'project', 'shard']);

/** Loopback hosts: credentials sent to them over http:// do not leave the machine. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function decoded(secret: ClusterSecretObject, key: string): string | undefined {
  const plain = secret.stringData?.[key];
  if (plain !== undefined) return plain;
  const encoded = secret.data?.[key];
  return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when `text` is base64 of at least one PEM certificate that parses. */
function pemCertificates(base64: string): boolean {
  const pem = Buffer.from(base64, 'base64').toString('utf8');
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return false;
  try {
    for (const block of blocks) new X509Certificate(block);
    return true;
  } catch {
    return false;
  }
}

function pemKey(base64: string): boolean {
  return /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(Buffer.from(base64, 'base64').toString('utf8'));
}

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/** Reads `config.tlsClientConfig`, adding a problem per bad field. */
function readTls(value: unknown, problems: string[]): Partial<ClusterConnectionSpec> {
  if (value === undefined) return {};
  if (!isRecord(value)) {
    problems.push('config.tlsClientConfig must be an object');
    return {};
  }
  const out: Partial<ClusterConnectionSpec> = {};
  for (const key of Object.keys(value))
    if (!TLS_FIELDS.has(key))
      problems.push(`unsupported: config.tlsClientConfig.${key} is not a field Rollgate reads`);
  const text = (key: string): string | undefined => {
    const field = value[key];
    if (field === undefined || field === '') return undefined;
    if (typeof field !== 'string') {
      problems.push(`config.tlsClientConfig.${key} must be a string`);
      return undefined;
    }
    return field;
  };
  const caData = text('caData');
  if (caData !== undefined) {
    if (!BASE64.test(caData) || !pemCertificates(caData))
      problems.push('config.tlsClientConfig.caData must be base64 of PEM certificates');
    else out.caData = caData.replace(/\s/g, '');
  }
  const certData = text('certData');
  const keyData = text('keyData');
  if (certData !== undefined) {
    if (!BASE64.test(certData) || !pemCertificates(certData))
      problems.push('config.tlsClientConfig.certData must be base64 of a PEM certificate');
    else out.certData = certData.replace(/\s/g, '');
  }
  if (keyData !== undefined) {
    // Never echo the key, not even a piece of it.
    if (!BASE64.test(keyData) || !pemKey(keyData))
      problems.push('config.tlsClientConfig.keyData must be base64 of a PEM private key');
    else out.keyData = keyData.replace(/\s/g, '');
  }
  if ((certData === undefined) !== (keyData === undefined))
    problems.push(
      'config.tlsClientConfig: certData and keyData go together (a client certificate and its key)',
    );
  const insecure = value.insecure;
  if (insecure !== undefined && typeof insecure !== 'boolean')
    problems.push('config.tlsClientConfig.insecure must be true or false');
  else if (insecure === true) out.insecure = true;
  const serverName = text('serverName');
  if (serverName !== undefined) out.serverName = serverName;
  return out;
}

/**
 * Reads an Argo CD cluster Secret: `data.name`, `data.server` and `data.config` (JSON: `bearerToken`,
 * `tlsClientConfig {caData, certData, keyData, insecure, serverName}`). Never throws: anything it cannot
 * use is a problem in the result, worded without any credential. Argo CD's own keys (`namespaces`,
 * `clusterResources`, `project`, `shard`) are accepted and ignored.
 */
export function parseArgoCdClusterSecret(secret: ClusterSecretObject): ParsedClusterSecret {
  const ref: SecretRef = {
    namespace: secret.metadata?.namespace ?? '',
    name: secret.metadata?.name ?? '',
    ...(secret.metadata?.uid !== undefined ? { uid: secret.metadata.uid } : {}),
  };
  const problems: string[] = [];
  const claimed = decoded(secret, 'name')?.trim() ?? '';
  // Without a usable name it is still reported, under the Secret's own name.
  const name = claimed !== '' ? claimed : ref.name;
  if (claimed === '') problems.push('data.name is missing: name the cluster');
  else if (claimed.length > MAX_NAME || !SECRET_CLUSTER_NAME.test(claimed))
    problems.push(
      `data.name "${claimed}" must be lowercase letters, digits, "-" and "." (a DNS-1123 subdomain, at most ${MAX_NAME} characters)`,
    );

  const server = decoded(secret, 'server')?.trim() ?? '';
  let serverUrl: URL | undefined;
  if (server === '') problems.push('data.server is missing: give the API server URL');
  else {
    try {
      serverUrl = new URL(server);
      if (serverUrl.protocol !== 'https:' && serverUrl.protocol !== 'http:') {
        problems.push(`data.server "${server}" must be an https:// (or http://) URL`);
        serverUrl = undefined;
      } else if (serverUrl.username !== '' || serverUrl.password !== '') {
        problems.push('data.server must not carry credentials; put them in data.config');
        serverUrl = undefined;
      }
    } catch {
      problems.push(`data.server "${server}" is not a URL`);
    }
  }

  const configText = decoded(secret, 'config');
  let spec: Partial<ClusterConnectionSpec> = {};
  if (configText === undefined || configText.trim() === '')
    problems.push('data.config is missing: give the JSON with bearerToken or tlsClientConfig');
  else {
    let config: unknown;
    try {
      config = JSON.parse(configText);
    } catch (err) {
      // JSON.parse's message quotes the text around the error, which may be the token: say where only.
      const at = /position (\d+)/.exec((err as Error).message)?.[1];
      problems.push(`data.config is not valid JSON${at !== undefined ? ` (at character ${at})` : ''}`);
    }
    if (config !== undefined && !isRecord(config)) problems.push('data.config must be a JSON object');
    else if (isRecord(config)) {
      for (const key of Object.keys(config)) {
        const known = UNSUPPORTED_CONFIG[key];
        if (known !== undefined)
          problems.push(`unsupported: ${known} in data.config; use bearerToken or a client certificate`);
        else if (!SUPPORTED_CONFIG.has(key))
          problems.push(`unsupported: data.config.${key} is not a field Rollgate reads`);
      }
      const token = config.bearerToken;
      if (token !== undefined && token !== '' && typeof token !== 'string')
        problems.push('data.config.bearerToken must be a string');
      else if (typeof token === 'string' && token !== '') spec.bearerToken = token.trim();
      if (config.disableCompression !== undefined && typeof config.disableCompression !== 'boolean')
        problems.push('data.config.disableCompression must be true or false');
      spec = { ...spec, ...readTls(config.tlsClientConfig, problems) };
    }
  }

  const credentials = spec.bearerToken !== undefined || spec.keyData !== undefined;
  if (
    serverUrl !== undefined &&
    serverUrl.protocol === 'http:' &&
    credentials &&
    !isLoopbackHost(serverUrl.hostname)
  )
    problems.push(
      `data.server is http://: the credentials would travel in clear to ${serverUrl.hostname}; use https://`,
    );
  for (const key of Object.keys({ ...secret.data, ...secret.stringData }))
    if (!['name', 'server', 'config'].includes(key) && !ARGOCD_ONLY_KEYS.has(key))
      problems.push(`unsupported: data.${key} is not a key of Argo CD's cluster Secret`);

  if (problems.length > 0) return { ok: false, secret: ref, name, problems };
  return {
    ok: true,
    secret: ref,
    spec: { name, server: server.replace(/\/+$/, ''), insecure: false, ...spec },
  };
}
