// @ts-check
// The page's side of the JSON API: the tab's token, authorised requests, and the response types (the server's own).

/** @typedef {import('../rollout-summary.ts').RolloutSummary} RolloutSummary */
/** @typedef {import('../rollout-reads.ts').RolloutDetail} RolloutDetail */
/** @typedef {import('../rollout-reads.ts').RolloutEventView} RolloutEventView */
/** @typedef {import('../../../views/experiment-view.ts').ExperimentView & { cluster?: string }} ExperimentView */
/** @typedef {import('../dashboard-clusters.ts').ClusterGroupView} ClusterGroupView */
/** @typedef {import('../fleet-reads.ts').FleetsResponse} FleetsResponse */
/** @typedef {import('../../../views/fleet-view.ts').FleetView} FleetView */
/** @typedef {RolloutDetail['view']['steps'][number]} StepView */
/** @typedef {NonNullable<RolloutDetail['view']['analysisRunDetails']>[number]} AnalysisRunDetail */
/** @typedef {AnalysisRunDetail['metrics'][number]} MetricDetail */
/** @typedef {RolloutDetail['tree']['revisions'][number]} RevisionNode */
/** @typedef {RevisionNode['replicaSets'][number]} ReplicaSetNode */
/** @typedef {import('../promotion-pipeline.ts').PromotionsResponse} PromotionsResponse */
/** @typedef {import('../promotion-pipeline.ts').EnvironmentView} EnvironmentView */
/** @typedef {import('../promotion-pipeline.ts').PromotionView} PromotionView */
/** @typedef {import('../promotion-pipeline.ts').PromotionLook} PromotionLook */
/** @typedef {{ number: number, url?: string, title?: string }} PullRequestRef */
/**
 * A Rollout's address: its group when known (every list row and event carries it; a link typed by hand may
 * not), and its cluster (absent: the local one, so today's addresses keep working).
 * @typedef {{ namespace: string, name: string, group?: string, cluster?: string }} RolloutKey
 */

const TOKEN_KEY = 'rollgate.dashboardToken';

/**
 * A token in the address (`rollgate dashboard` prints `/ui/?token=…`) is kept for the tab and taken out of
 * the address bar and history at once, so it is not bookmarked, shared in a screenshot or sent on.
 */
export function takeTokenFromAddress() {
  const params = new URLSearchParams(location.search);
  const given = params.get('token');
  if (given === null) return;
  if (given.trim() !== '') sessionStorage.setItem(TOKEN_KEY, given.trim());
  params.delete('token');
  const rest = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
}

/** @param {string | undefined} token the new token; undefined forgets it */
export function setToken(token) {
  if (token === undefined) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/**
 * Who is signed in (OpenID Connect), as GET /api/v1/session answers: `signIn` says the server offers it.
 * @typedef {{ signIn: boolean, user?: string, groups?: string[], csrf?: string }} SessionView
 */

/** The signed-in session's CSRF value, sent on every request (the server checks it on non-GETs). */
let csrf = '';

/** @param {SessionView} session */
export function setSession(session) {
  csrf = session.csrf ?? '';
}

/**
 * @returns {Record<string, string>} the Authorization header when the tab holds a token (a token wins over a
 * session), else the session's CSRF header when signed in
 */
export function authHeaders() {
  const token = sessionStorage.getItem(TOKEN_KEY) ?? '';
  if (token) return { authorization: `Bearer ${token}` };
  return csrf ? { 'x-rollgate-csrf': csrf } : {};
}

/** An API answer other than 2xx: the server's error code and message. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Rollgate's own group: its Rollouts keep the keys and addresses they always had. */
const ROLLGATE_GROUP = 'rollgate.dev';

/** The cluster Rollgate runs in (the list names it): its Rollouts keep the keys and addresses they had. */
let localCluster = 'in-cluster';

/** @param {string} name the local cluster's name, as GET /api/v1/rollouts reports it */
export function setLocalCluster(name) {
  localCluster = name;
}

/** @param {{ cluster?: string | undefined }} key the cluster when it is not the local one, else undefined */
export const remoteClusterOf = (key) =>
  key.cluster !== undefined && key.cluster !== '' && key.cluster !== localCluster ? key.cluster : undefined;

/**
 * The row key: `namespace/name`, with `@group` for any other group, so a name in both groups is two rows,
 * and `cluster:` first for another cluster than the local one.
 * @param {RolloutKey} key
 */
export const keyOf = (key) => {
  const cluster = remoteClusterOf(key);
  return `${cluster ? `${cluster}:` : ''}${key.namespace}/${key.name}${
    key.group && key.group !== ROLLGATE_GROUP ? `@${key.group}` : ''
  }`;
};

/**
 * How a person reads the key: `namespace/name`, the group in brackets when it is not Rollgate's own, and
 * the cluster when it is not the local one.
 * @param {RolloutKey} key
 */
export const labelOf = (key) => {
  const cluster = remoteClusterOf(key);
  return `${key.namespace}/${key.name}${key.group && key.group !== ROLLGATE_GROUP ? ` (${key.group})` : ''}${
    cluster ? ` in cluster ${cluster}` : ''
  }`;
};

/**
 * The query naming the group and (when not the local one) the cluster.
 * @param {RolloutKey} key
 */
const groupQuery = (key) => {
  const params = new URLSearchParams();
  if (key.group) params.set('group', key.group);
  const cluster = remoteClusterOf(key);
  if (cluster) params.set('cluster', cluster);
  const text = params.toString();
  return text ? `?${text}` : '';
};

/**
 * The address query of a page (`#/rollouts/ns/name?group=…&cluster=…`) as a key's group and cluster.
 * @param {string | undefined} query
 * @returns {{ group?: string, cluster?: string }}
 */
export function keyQuery(query) {
  const params = new URLSearchParams(query ?? '');
  const group = params.get('group');
  const cluster = params.get('cluster');
  return { ...(group ? { group } : {}), ...(cluster ? { cluster } : {}) };
}

/** @param {RolloutKey} key */
const apiPath = (key) =>
  `/api/v1/rollouts/${encodeURIComponent(key.namespace)}/${encodeURIComponent(key.name)}`;

/** @param {RolloutKey} key the detail's API path (in the Rollout's group when known) */
export const rolloutPath = (key) => `${apiPath(key)}${groupQuery(key)}`;

/**
 * @param {RolloutKey} key
 * @param {string} verb
 */
export const verbPath = (key, verb) => `${apiPath(key)}/${encodeURIComponent(verb)}${groupQuery(key)}`;

/** @param {RolloutKey} key the page's address of one rollout */
export const rolloutHref = (key) =>
  `#/rollouts/${encodeURIComponent(key.namespace)}/${encodeURIComponent(key.name)}${groupQuery(key)}`;

/** @param {RolloutKey} key one Experiment's API path */
export const experimentPath = (key) =>
  `/api/v1/experiments/${encodeURIComponent(key.namespace)}/${encodeURIComponent(key.name)}${groupQuery(key)}`;

/** @type {() => void} */
let onUnauthorized = () => undefined;

/** @param {() => void} handler called on every 401, so the page can ask for the token */
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

/**
 * One API call with the tab's token, or the session cookie (same origin only) and its CSRF header. The body is the caller's to type: it is the server's
 * answer for that path.
 * @template T
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<T>}
 */
export async function api(path, init = {}) {
  const res = await fetch(path, {
    ...init,
    headers: { ...authHeaders(), .../** @type {Record<string, string>} */ (init.headers ?? {}) },
    credentials: 'same-origin',
  });
  /** @type {{ error?: { code?: string, message?: string } }} */
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    if (res.status === 401) onUnauthorized();
    throw new ApiError(res.status, body.error?.code ?? 'http', body.error?.message ?? `HTTP ${res.status}`);
  }
  return /** @type {T} */ (body);
}
