// The dashboard on the server's port: the JSON API under /api/v1, the live event stream, the verbs, and the page at /ui/.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../clock/clock.ts';
import type { ClusterHandle, ClusterSet, ClusterState } from '../../clusters/cluster-set.ts';
import { createImpersonatingKubeClients, type KubeClients } from '../../kube/client.ts';
import { EventRecorder } from '../../kube/event-recorder.ts';
import type { RolloutKey } from '../../reconciler/observed-state-reader.ts';
import {
  abortRollout,
  pauseRollout,
  promoteRollout,
  restartRollout,
  resumeRollout,
  retryRollout,
  findRollout,
  type RolloutCommandResult,
  type RolloutVerbOptions,
} from '../../views/rollout-commands.ts';
import type { Logger } from '../../log/logger.ts';
import { DRIVEN_GROUPS, type DrivenApi, type DrivenGroup } from '../../manifest/driven-api.ts';
import { BOTH_APIS } from '../../views/rollout-list.ts';
import { findExperiment, listExperimentViews, readExperimentView } from '../../views/experiment-reads.ts';
import { bearerOf, carriesToken, type DashboardAccess } from './dashboard-access.ts';
import type { DashboardSession } from './dashboard-session.ts';
import { loadDashboardAssets, type DashboardAsset } from './dashboard-assets.ts';
import { DashboardRequestError } from './dashboard-error.ts';
import { CALLBACK_PATH, OidcSignIn, SIGN_IN_PATH, SIGN_OUT_PATH } from './oidc-sign-in.ts';
import { hostAllowed, sameOrigin } from './request-authority.ts';
import { RolloutReadReview } from './rollout-read-review.ts';
import type { PromotionsResponse } from './promotion-pipeline.ts';
import type { ReadPromotions } from './promotion-reads.ts';
import { listRolloutSummaries, readRolloutDetail } from './rollout-reads.ts';
import { RolloutStream, type WatchClusterRollouts } from './rollout-stream.ts';
import {
  clusterFailure,
  clustersInOrder,
  readEachCluster,
  requestedCluster,
  type ClusterGroupView,
} from './dashboard-clusters.ts';
import { readFleets } from './fleet-reads.ts';

/** The verbs, each exactly the CLI's (src/views/rollout-commands.ts). */
export const DASHBOARD_VERBS = {
  promote: (clients, key, _clock, group) => promoteRollout(clients, key, group),
  'promote-full': (clients, key, _clock, group) => promoteRollout(clients, key, { full: true, ...group }),
  abort: (clients, key, _clock, group) => abortRollout(clients, key, group),
  retry: (clients, key, _clock, group) => retryRollout(clients, key, group),
  restart: (clients, key, clock, group) => restartRollout(clients, key, clock, group),
  pause: (clients, key, _clock, group) => pauseRollout(clients, key, group),
  resume: (clients, key, _clock, group) => resumeRollout(clients, key, group),
} satisfies Record<
  string,
  (
    clients: KubeClients,
    key: RolloutKey,
    clock: Clock,
    group: RolloutVerbOptions,
  ) => Promise<RolloutCommandResult>
>;

export type DashboardVerb = keyof typeof DASHBOARD_VERBS;

export interface DashboardOptions {
  /**
   * The clusters whose Rollouts, Experiments and verbs it serves (the local one: Fleets, promotions, and
   * the addresses without `?cluster=`). Registrations may change while it runs.
   */
  clusters: ClusterSet;
  /** Each cluster's state (Ready, Unreachable, …) for its heading; without it, headings show none. */
  clusterState?: (name: string) => ClusterState | undefined;
  access: DashboardAccess;
  watchRollouts: WatchClusterRollouts;
  /** The groups whose Rollouts it lists and acts on (default both: `rollgate dashboard`). */
  apis?: readonly DrivenApi[];
  clock: Clock;
  logger: Logger;
  /** Only this namespace's Rollouts (`kubernetes.watchNamespace`); empty = every namespace. */
  namespace?: string;
  /** Reads GET /api/v1/promotions; without it (no configuration, as `rollgate dashboard`) the view is empty. */
  promotions?: ReadPromotions;
}

/**
 * Who a request reads or acts as: a bearer token (Rollgate's own rights, as configured), or a person signed
 * in with OpenID Connect (their own rights: reads reviewed, actions impersonated).
 */
type Reader = { kind: 'token' } | { kind: 'person'; session: DashboardSession };

/** The header a signed-in page's non-GET requests carry: the session's CSRF value, which no other site can read. */
export const CSRF_HEADER = 'x-rollgate-csrf';

/** What /api/v1/promotions answers when no promotion is configured where the dashboard runs. */
const NO_PROMOTIONS: PromotionsResponse = { environments: [], promotions: [], history: [] };

/** Answers the dashboard's routes; `handle` returns false for a path that is not the dashboard's. */
export interface Dashboard {
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  /** Ends the open event streams, so the server can close. */
  close(): void;
}

/** Names as the API server allows them (DNS subdomain); anything else cannot be a Rollout. */
const NAME = '[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?';
const DETAIL = new RegExp(`^/api/v1/rollouts/(${NAME})/(${NAME})/?$`);
const VERB = new RegExp(`^/api/v1/rollouts/(${NAME})/(${NAME})/([a-z-]+)/?$`);
const EXPERIMENT = new RegExp(`^/api/v1/experiments/(${NAME})/(${NAME})/?$`);

/** The page may load only its own files and talk only to this server. */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(`${JSON.stringify(body)}\n`);
}

function sendError(res: ServerResponse, err: DashboardRequestError): void {
  const headers: Record<string, string> =
    err.status === 401 ? { 'www-authenticate': 'Bearer realm="rollgate"' } : {};
  sendJson(res, err.status, { error: { code: err.code, message: err.message } }, headers);
}

/** A failure from the cluster as the API answers it: the kube error's code, and 404 for a missing rollout. */
function kubeFailure(res: ServerResponse, err: unknown, reader: Reader = { kind: 'token' }): void {
  if (err instanceof DashboardRequestError) throw err;
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code !== 'string') throw err;
  // A person's request refused by the API server is their RBAC speaking; Rollgate's own is a setup fault.
  const status =
    code === 'kube.forbidden' && reader.kind === 'person'
      ? 403
      : code === 'kube.rollout_not_found' || code === 'kube.experiment_not_found' || code === 'kube.not_found'
        ? 404
        : code === 'kube.conflict' ||
            code === 'kube.rollout_ambiguous' ||
            code === 'kube.experiment_ambiguous'
          ? 409
          : code === 'kube.invalid' || code === 'kube.experiment_invalid'
            ? 422
            : 502;
  sendJson(res, status, { error: { code, message } });
}

export function createDashboard(options: DashboardOptions): Dashboard {
  const { clusters, access, clock } = options;
  const scope = options.namespace ?? '';
  const logger = options.logger.child({ component: 'dashboard' });
  const assets = loadDashboardAssets();
  const apis = options.apis ?? BOTH_APIS;
  const shownGroups: readonly DrivenGroup[] = apis.map((api) => api.group);
  /**
   * The group a detail or verb names (`?group=`), else the only one shown, else none (found in either,
   * ambiguous when in both). A group the dashboard does not show is refused.
   */
  const groupOf = (req: IncomingMessage): DrivenGroup | undefined => {
    const named = new URL(req.url ?? '/', 'http://dashboard').searchParams.get('group');
    if (named === null || named === '') return shownGroups.length === 1 ? shownGroups[0] : undefined;
    const group = DRIVEN_GROUPS.find((candidate) => candidate === named);
    if (group === undefined || !shownGroups.includes(group))
      throw new DashboardRequestError(
        400,
        'dashboard.unknown_group',
        `group ${JSON.stringify(named.slice(0, 100))} is not one this dashboard shows: use ${shownGroups.join(' or ')}`,
      );
    return group;
  };
  const stream = new RolloutStream(clusters, options.watchRollouts, logger);
  const signIn = access.oidc ? new OidcSignIn(access.oidc, clock, logger) : undefined;
  /**
   * One review per cluster, asked of that cluster's API server with Rollgate's identity there: a person's
   * rights are their RBAC on the cluster the Rollout is in. A cluster where Rollgate may not create
   * SubjectAccessReviews answers no read to a person (the review fails, and its group says why).
   */
  const reviews = new WeakMap<ClusterHandle, RolloutReadReview>();
  const reviewOf = (cluster: ClusterHandle): RolloutReadReview => {
    let found = reviews.get(cluster);
    if (found === undefined) {
      found = new RolloutReadReview(cluster.kube.clients, clock);
      reviews.set(cluster, found);
    }
    return found;
  };
  /**
   * Whether a person may read Rollouts (or `resource`) of `group` in `namespace` of `cluster` (a token
   * reader always may).
   */
  const mayRead = async (
    reader: Reader,
    cluster: ClusterHandle,
    namespace: string,
    group: string,
    resource = 'rollouts',
  ): Promise<boolean> =>
    reader.kind === 'token' ||
    signIn === undefined ||
    (await reviewOf(cluster).mayGet(reader.session, namespace, group, resource));
  /** The session of a request that sends no bearer token (a token always wins: automation keeps its rights). */
  const sessionOf = (req: IncomingMessage): DashboardSession | undefined =>
    signIn !== undefined && bearerOf(req) === undefined ? signIn.sessionOf(req) : undefined;
  /** A verb's Event goes to the Rollout's own cluster. */
  const recorders = new WeakMap<ClusterHandle, EventRecorder>();
  const recorderOf = (cluster: ClusterHandle): EventRecorder => {
    let found = recorders.get(cluster);
    if (found === undefined) {
      found = new EventRecorder(cluster.kube.clients.core, clock, logger, 'rollgate-dashboard');
      recorders.set(cluster, found);
    }
    return found;
  };
  /** A cluster's heading: its name, whether it is the local one, and its state when known. */
  const groupView = (cluster: ClusterHandle, error?: unknown): ClusterGroupView => {
    const state = options.clusterState?.(cluster.name);
    return {
      name: cluster.name,
      local: cluster.name === clusters.localName,
      ...(state !== undefined && {
        state: { phase: state.phase, message: state.message, since: state.since },
      }),
      ...(error !== undefined && { error: clusterFailure(error) }),
    };
  };
  /**
   * Reads every cluster (each apart, see readEachCluster) and answers the items with each cluster's group.
   * With one cluster, a failure answers as before (the kube error's status), so one cluster is unchanged.
   */
  const listAcrossClusters = async <T extends object>(
    res: ServerResponse,
    read: (cluster: ClusterHandle) => Promise<T[]>,
  ): Promise<void> => {
    const results = await readEachCluster(clustersInOrder(clusters), read);
    const only = results.length === 1 ? results[0] : undefined;
    if (only !== undefined && 'error' in only) return kubeFailure(res, only.error);
    const items = results.flatMap((r) =>
      'value' in r ? r.value.map((item) => ({ ...item, cluster: r.cluster.name })) : [],
    );
    for (const r of results)
      if ('error' in r)
        logger.debug({ cluster: r.cluster.name, err: r.error }, 'dashboard: a cluster could not be read');
    sendJson(res, 200, {
      items,
      clusters: results.map((r) => groupView(r.cluster, 'error' in r ? r.error : undefined)),
    });
  };

  // Whoever may act may also read: the page then needs one token, not two.
  const actionToken = access.actions.enabled ? access.actions.token : undefined;
  const requireRead = (req: IncomingMessage): Reader => {
    const session = sessionOf(req);
    if (session !== undefined) return { kind: 'person', session };
    if (access.readToken === undefined && access.openReads) return { kind: 'token' };
    if (access.readToken !== undefined && carriesToken(req, access.readToken)) return { kind: 'token' };
    if (actionToken !== undefined && carriesToken(req, actionToken)) return { kind: 'token' };
    throw new DashboardRequestError(
      401,
      'dashboard.unauthorized',
      access.readToken === undefined && actionToken === undefined
        ? 'dashboard reads need a token on a server other machines can reach: set dashboard.readTokenEnv or dashboard.readTokenFile (and send it as Authorization: Bearer <token>), or bind server.host to 127.0.0.1'
        : signIn !== undefined
          ? `sign in at ${SIGN_IN_PATH}, or send the dashboard token as Authorization: Bearer <token>`
          : 'send the dashboard token as Authorization: Bearer <token>',
    );
  };

  /**
   * A signed-in person's non-GET: from the dashboard's own page only. The session cookie is SameSite=Strict,
   * the request must name this server as its Origin (browsers send one on every POST), and it must carry
   * the session's CSRF value in a header, which only a page of this origin could have read
   * (GET /api/v1/session) and which no form or simple cross-site request can set.
   */
  const requirePersonAction = (req: IncomingMessage, session: DashboardSession): void => {
    const given = req.headers[CSRF_HEADER];
    if (req.headers.origin === undefined || !sameOrigin(req.headers))
      throw new DashboardRequestError(
        403,
        'dashboard.cross_origin',
        "a signed-in person's actions are taken only from the dashboard's own page (its Origin)",
      );
    if (typeof given !== 'string' || !sameSecret(given, session.csrf))
      throw new DashboardRequestError(
        403,
        'dashboard.csrf',
        `send the session's CSRF value (GET /api/v1/session) in the ${CSRF_HEADER} header`,
      );
  };

  const requireAction = (req: IncomingMessage): void => {
    if (!access.actions.enabled)
      throw new DashboardRequestError(
        403,
        'dashboard.actions_disabled',
        'dashboard actions are disabled (set dashboard.actions.enabled and a token)',
      );
    // Only in the Authorization header: a header no cross-site form or simple request can set, so a browser
    // sends it from another site only after a preflight, which this server never answers.
    if (!carriesToken(req, access.actions.token))
      throw new DashboardRequestError(
        401,
        'dashboard.unauthorized',
        'send the dashboard actions token as Authorization: Bearer <token>',
      );
    if (!sameOrigin(req.headers))
      throw new DashboardRequestError(
        403,
        'dashboard.cross_origin',
        "verbs are taken only from the dashboard's own page (its Origin) or from a client that sends no Origin",
      );
  };

  /** The Host check against DNS rebinding, on every dashboard route (the page included). */
  const requireHost = (req: IncomingMessage): void => {
    if (access.hosts === undefined || hostAllowed(req.headers.host, access.hosts.allowed)) return;
    const names = ['localhost', '127.0.0.1', '[::1]', ...access.hosts.allowed].join(', ');
    throw new DashboardRequestError(
      403,
      'dashboard.host_not_allowed',
      `this dashboard answers to ${names} only, not to Host ${JSON.stringify((req.headers.host ?? '').slice(0, 100))} (a name of another site pointed here is refused: DNS rebinding); open it by one of those names, or allow the name (rollgate dashboard --allowed-host, or dashboard.allowedHosts)`,
    );
  };

  const serveAsset = (res: ServerResponse, asset: DashboardAsset | undefined): void => {
    if (asset === undefined) throw new DashboardRequestError(404, 'dashboard.not_found', 'no such file');
    res.writeHead(200, { 'content-type': asset.contentType, ...PAGE_HEADERS });
    res.end(asset.body);
  };

  const act = async (
    req: IncomingMessage,
    res: ServerResponse,
    key: RolloutKey,
    verb: string,
  ): Promise<void> => {
    if (!Object.hasOwn(DASHBOARD_VERBS, verb))
      throw new DashboardRequestError(
        404,
        'dashboard.unknown_verb',
        `unknown verb ${verb}; use one of ${Object.keys(DASHBOARD_VERBS).join(', ')}`,
      );
    const session = sessionOf(req);
    if (session === undefined) requireAction(req);
    else requirePersonAction(req, session);
    const reader: Reader = session === undefined ? { kind: 'token' } : { kind: 'person', session };
    const group = groupOf(req);
    const cluster = requestedCluster(req, clusters);
    req.resume();
    const client = req.socket.remoteAddress ?? 'unknown';
    const who = session === undefined ? {} : { user: session.user };
    const where = { cluster: cluster.name };
    // A person's verb is sent as that person to the Rollout's cluster, through Rollgate's connection to
    // it: that API server's RBAC, not Rollgate's, decides.
    const own = cluster.kube.clients;
    const acting: KubeClients =
      session === undefined ? own : createImpersonatingKubeClients(own.kubeConfig, session);
    let result: RolloutCommandResult;
    let found: DrivenApi;
    try {
      // Found first, so the verb and its Event go to the Rollout's own group (a name may be in both).
      found = (await findRollout(acting, key, group)).api;
      result = await DASHBOARD_VERBS[verb as DashboardVerb](acting, key, clock, { group: found.group });
    } catch (err) {
      logger.warn(
        { verb, rollout: `${key.namespace}/${key.name}`, ...where, client, ...who, err },
        'dashboard action failed',
      );
      return kubeFailure(res, err, reader);
    }
    // Who did what, from where: the log for operators, the Event for whoever looks at the rollout.
    logger.info(
      { verb, rollout: `${key.namespace}/${key.name}`, ...where, client, ...who },
      'dashboard action',
    );
    const by = session === undefined ? `from ${client}` : `by ${session.user}`;
    await recorderOf(cluster).record(
      { apiVersion: found.apiVersion, kind: 'Rollout', namespace: key.namespace, name: key.name },
      { type: 'Normal', reason: 'DashboardAction', message: `${verb} ${by}: ${result.summary}` },
    );
    sendJson(res, 200, { verb, group: found.group, cluster: cluster.name, ...result });
  };

  const route = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    if (path !== '/ui' && !path.startsWith('/ui/') && !path.startsWith('/api/v1/')) return false;
    requireHost(req);
    if (path === '/ui') {
      res.writeHead(308, { location: '/ui/' });
      res.end();
      return true;
    }
    if (path.startsWith('/ui/auth/')) return signInRoute(req, res, path);
    if (path === '/api/v1/session' || path === '/api/v1/session/') {
      if (req.method !== 'GET')
        throw new DashboardRequestError(405, 'dashboard.method_not_allowed', 'the session is read with GET');
      const session = sessionOf(req);
      // The CSRF value goes only to a same-origin reader: no CORS header is ever sent.
      sendJson(res, 200, {
        signIn: signIn !== undefined,
        ...(session !== undefined ? { user: session.user, groups: session.groups, csrf: session.csrf } : {}),
      });
      return true;
    }
    if (path.startsWith('/ui/')) {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new DashboardRequestError(405, 'dashboard.method_not_allowed', 'the page is read with GET');
      // The page itself needs no token: it holds no data, and asks for the token before reading any.
      const name = path === '/ui/' ? 'index.html' : path.slice('/ui/'.length);
      serveAsset(res, assets.get(name));
      return true;
    }
    const outOfScope = (namespace: string | undefined): boolean => scope !== '' && namespace !== scope;
    const verb = VERB.exec(path);
    if (verb !== null) {
      if (req.method !== 'POST')
        throw new DashboardRequestError(405, 'dashboard.method_not_allowed', 'verbs are sent with POST');
      if (outOfScope(verb[1]))
        throw new DashboardRequestError(
          404,
          'dashboard.not_found',
          `Rollgate watches namespace ${scope} only`,
        );
      await act(req, res, { namespace: verb[1] ?? '', name: verb[2] ?? '' }, verb[3] ?? '');
      return true;
    }
    if (req.method !== 'GET')
      throw new DashboardRequestError(405, 'dashboard.method_not_allowed', `${req.method ?? ''} not allowed`);
    if (path === '/api/v1/rollouts' || path === '/api/v1/rollouts/') {
      const reader = requireRead(req);
      await listAcrossClusters(res, async (cluster) => {
        const all = await listRolloutSummaries(cluster.kube.clients, scope, apis);
        // Read with Rollgate's identity, shown as far as the person may `get` (one review per namespace).
        const shown = await Promise.all(all.map((r) => mayRead(reader, cluster, r.namespace, r.group)));
        return all.filter((_, i) => shown[i]);
      });
      return true;
    }
    const detail = DETAIL.exec(path);
    if (detail !== null) {
      const reader = requireRead(req);
      if (outOfScope(detail[1]))
        throw new DashboardRequestError(
          404,
          'dashboard.not_found',
          `Rollgate watches namespace ${scope} only`,
        );
      const key = { namespace: detail[1] ?? '', name: detail[2] ?? '' };
      const group = groupOf(req);
      const cluster = requestedCluster(req, clusters);
      try {
        // Every group the Rollout may be found in must be readable, so a refusal says nothing of which exists.
        if (reader.kind === 'person')
          for (const g of group === undefined ? shownGroups : [group])
            if (!(await mayRead(reader, cluster, key.namespace, g)))
              throw new DashboardRequestError(
                403,
                'dashboard.forbidden',
                `${reader.session.user} may not get rollouts.${g} in namespace ${key.namespace} of cluster ${cluster.name}`,
              );
        const found = await readRolloutDetail(cluster.kube.clients, key, clock.now(), group);
        if (found === undefined)
          sendJson(res, 404, {
            error: {
              code: 'kube.rollout_not_found',
              message: `rollout ${key.namespace}/${key.name} not found`,
            },
          });
        else sendJson(res, 200, { ...found, summary: { ...found.summary, cluster: cluster.name } });
      } catch (err) {
        kubeFailure(res, err);
      }
      return true;
    }
    if (path === '/api/v1/experiments' || path === '/api/v1/experiments/') {
      const reader = requireRead(req);
      await listAcrossClusters(res, async (cluster) => {
        // Those the schema refuses are left out, as in the rollout list; a person sees those of the
        // namespaces where they may `get` experiments.
        const { views } = await listExperimentViews(cluster.kube.clients, scope, apis);
        const shown = await Promise.all(
          views.map((v) => mayRead(reader, cluster, v.namespace, v.group, 'experiments')),
        );
        return views.filter((_, i) => shown[i]);
      });
      return true;
    }
    const experiment = EXPERIMENT.exec(path);
    if (experiment !== null) {
      const reader = requireRead(req);
      if (outOfScope(experiment[1]))
        throw new DashboardRequestError(
          404,
          'dashboard.not_found',
          `Rollgate watches namespace ${scope} only`,
        );
      const ref = { namespace: experiment[1] ?? '', name: experiment[2] ?? '' };
      const group = groupOf(req);
      const cluster = requestedCluster(req, clusters);
      const { clients } = cluster.kube;
      try {
        // As for a Rollout: every group it may be found in must be readable by the person.
        if (reader.kind === 'person')
          for (const g of group === undefined ? shownGroups : [group])
            if (!(await mayRead(reader, cluster, ref.namespace, g, 'experiments')))
              throw new DashboardRequestError(
                403,
                'dashboard.forbidden',
                `${reader.session.user} may not get experiments.${g} in namespace ${ref.namespace}`,
              );
        const { live } = await findExperiment(clients, ref, group);
        sendJson(res, 200, { ...(await readExperimentView(clients, ref, live)), cluster: cluster.name });
      } catch (err) {
        kubeFailure(res, err);
      }
      return true;
    }
    if (path === '/api/v1/promotions' || path === '/api/v1/promotions/') {
      const reader = requireRead(req);
      try {
        // The pipeline spans sources and namespaces, with no one resource to review: token readers only.
        const promotions = reader.kind === 'token' && options.promotions;
        sendJson(res, 200, promotions ? await promotions() : NO_PROMOTIONS);
      } catch (err) {
        kubeFailure(res, err);
      }
      return true;
    }
    if (path === '/api/v1/fleets' || path === '/api/v1/fleets/') {
      const reader = requireRead(req);
      const local = clusters.local();
      try {
        // Fleets live in the local cluster; a person sees those of the namespaces where they may `get` fleets.
        const read = await readFleets(local.kube.clients, scope);
        const shown = await Promise.all(
          read.items.map((f) => mayRead(reader, local, f.namespace, 'rollgate.dev', 'fleets')),
        );
        sendJson(res, 200, { ...read, items: read.items.filter((_, i) => shown[i]) });
      } catch (err) {
        kubeFailure(res, err);
      }
      return true;
    }
    if (path === '/api/v1/events') {
      const reader = requireRead(req);
      stream.subscribe(
        res,
        reader.kind === 'person'
          ? async (name, ns, g) => {
              const cluster = clusters.get(name);
              return cluster !== undefined && (await mayRead(reader, cluster, ns, g));
            }
          : undefined,
      );
      return true;
    }
    throw new DashboardRequestError(404, 'dashboard.not_found', `no route ${path}`);
  };

  /** /ui/auth/…: sign-in, the IdP's callback, sign-out; not found without `dashboard.oidc`. */
  const signInRoute = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    if (signIn === undefined)
      throw new DashboardRequestError(
        404,
        'dashboard.not_found',
        'sign-in is not configured (dashboard.oidc)',
      );
    if (path === SIGN_IN_PATH || path === CALLBACK_PATH) {
      if (req.method !== 'GET')
        throw new DashboardRequestError(405, 'dashboard.method_not_allowed', `${path} is read with GET`);
      if (path === SIGN_IN_PATH) await signIn.signIn(res);
      else await signIn.callback(req, res);
      return true;
    }
    if (path === SIGN_OUT_PATH) {
      if (req.method !== 'POST')
        throw new DashboardRequestError(405, 'dashboard.method_not_allowed', 'sign out with POST');
      const session = signIn.sessionOf(req);
      // Without a session there is nothing to end; the cookie is cleared anyway.
      if (session !== undefined) requirePersonAction(req, session);
      req.resume();
      sendJson(res, 200, { signedOut: true }, { 'set-cookie': signIn.endSession() });
      return true;
    }
    throw new DashboardRequestError(404, 'dashboard.not_found', `no route ${path}`);
  };

  return {
    async handle(req, res, path) {
      try {
        return await route(req, res, path);
      } catch (err) {
        if (!(err instanceof DashboardRequestError)) throw err;
        // The Authorization header is never logged: only the route, the outcome, and for a refused Host or
        // Origin (someone else's page at work) what it named.
        if (err.code === 'dashboard.host_not_allowed' || err.code === 'dashboard.cross_origin')
          logger.warn(
            {
              path,
              status: err.status,
              code: err.code,
              host: (req.headers.host ?? '').slice(0, 100),
              origin: (req.headers.origin ?? '').slice(0, 100),
              client: req.socket.remoteAddress,
            },
            'dashboard request refused',
          );
        else logger.debug({ path, status: err.status, code: err.code }, 'dashboard request refused');
        req.resume();
        sendError(res, err);
        return true;
      }
    },
    close: () => stream.close(),
  };
}

/** Whether two secrets are equal, in a time that does not depend on where they differ. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
