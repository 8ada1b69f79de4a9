// @ts-check
// Rollgate dashboard page: the rollout list, one rollout and the promotions, live from the server's event stream.
// Preact components (rendered again on every change, which updates the DOM in place: focus, typed text and open
// <details> stay), the page's state in one object, the token dialog and the stream at the edge.
import {
  ApiError,
  api,
  authHeaders,
  experimentPath,
  keyOf,
  keyQuery,
  labelOf,
  rolloutPath,
  verbPath,
  setLocalCluster,
  setSession,
  setToken,
  takeTokenFromAddress,
  whenUnauthorized,
} from './api.js';
import { ExperimentPage, Experiments } from './experiments-view.js';
import { Fleets } from './fleets-view.js';
import { RolloutList } from './list-view.js';
import { html } from './page-parts.js';
import { Promotions } from './promotions-view.js';
import { RolloutPage } from './rollout-view.js';
import { render } from './vendor/preact.js';

/** @typedef {import('./api.js').RolloutSummary} RolloutSummary */
/** @typedef {import('./api.js').RolloutDetail} RolloutDetail */
/** @typedef {import('./api.js').PromotionsResponse} PromotionsResponse */
/** @typedef {import('./api.js').RolloutKey} RolloutKey */
/** @typedef {import('./api.js').ExperimentView} ExperimentView */
/** @typedef {import('./api.js').ClusterGroupView} ClusterGroupView */
/** @typedef {import('./api.js').FleetsResponse} FleetsResponse */
/** @typedef {import('./list-view.js').ListFilter} ListFilter */
/** @typedef {import('./rollout-view.js').Verb} Verb */

/**
 * @typedef {object} PageState
 * @property {'list' | 'detail' | 'promotions' | 'experiments' | 'experiment' | 'fleets'} view
 * @property {Map<string, RolloutSummary>} rollouts
 * @property {ClusterGroupView[]} clusters each cluster of the last list read, with its state or read error
 * @property {FleetsResponse | undefined} fleets read when the view is shown, and again while it is
 * @property {ListFilter} filter
 * @property {RolloutKey | undefined} detailKey
 * @property {{ data: RolloutDetail, readAt: number } | undefined} detail the detail of `detailKey`, and when it was read
 * @property {PromotionsResponse | undefined} promotions read when the view is shown and when a rollout changes
 * @property {ExperimentView[] | undefined} experiments read when the view is shown, and again while it is
 * @property {RolloutKey | undefined} experimentKey the Experiment the `experiment` view shows
 * @property {ExperimentView | undefined} experiment that Experiment, as last read
 * @property {{ status: number, message: string } | undefined} error why the current view could not be read
 */

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T} the page's element (index.html holds it; anything else is a broken page)
 */
function element(id, type) {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no ${type.name} #${id}`);
  return found;
}

const main = element('main', HTMLElement);
const live = element('live', HTMLElement);
const notice = element('notice', HTMLElement);
const confirmDialog = element('confirm-dialog', HTMLDialogElement);
const tokenDialog = element('token-dialog', HTMLDialogElement);
const tokenInput = element('token-input', HTMLInputElement);

/** @type {PageState} */
const state = {
  view: 'list',
  rollouts: new Map(),
  clusters: [],
  fleets: undefined,
  filter: { namespace: '', text: '' },
  detailKey: undefined,
  detail: undefined,
  promotions: undefined,
  experiments: undefined,
  experimentKey: undefined,
  experiment: undefined,
  error: undefined,
};

/** @param {{ error: { status: number, message: string } }} props */
function LoadError({ error }) {
  return html`<h1>${error.status === 401 ? 'Token needed' : 'Could not load'}</h1>
    <p>${error.message}</p>
    <p><button type="button" onClick=${() => void reload()}>Try again</button></p>`;
}

/** @param {{ state: PageState }} props */
function Page({ state: s }) {
  if (s.error) return html`<${LoadError} error=${s.error} />`;
  if (s.view === 'promotions') return html`<${Promotions} promotions=${s.promotions} />`;
  if (s.view === 'experiments') return html`<${Experiments} experiments=${s.experiments} />`;
  if (s.view === 'fleets') return html`<${Fleets} fleets=${s.fleets} />`;
  if (s.view === 'experiment') {
    const key = s.experimentKey;
    if (!s.experiment || !key) return html`<p class="muted">${`Loading ${key ? labelOf(key) : ''}…`}</p>`;
    return html`<${ExperimentPage} experiment=${s.experiment} />`;
  }
  if (s.view === 'detail') {
    const key = s.detailKey;
    if (!s.detail || !key) return html`<p class="muted">${`Loading ${key ? labelOf(key) : ''}…`}</p>`;
    return html`<${RolloutPage} detail=${s.detail.data} readAt=${s.detail.readAt} onVerb=${confirmVerb} />`;
  }
  return html`<${RolloutList}
    rollouts=${s.rollouts}
    clusters=${s.clusters}
    filter=${s.filter}
    onFilter=${(/** @type {ListFilter} */ filter) => {
      state.filter = filter;
      paint();
    }}
  />`;
}

/** Draws the state: Preact compares it with what is on the page and changes only what differs. */
function paint() {
  render(html`<${Page} state=${state} />`, main);
}

/** @param {unknown} err */
function failed(err) {
  state.error = {
    status: err instanceof ApiError ? err.status : 0,
    message: err instanceof Error ? err.message : String(err),
  };
  paint();
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let noticeTimer;

/**
 * @param {string} message
 * @param {boolean} [error]
 */
function show(message, error = false) {
  notice.textContent = message;
  notice.className = error ? 'notice error' : 'notice';
  notice.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => (notice.hidden = true), 6000);
}

// ---- routing ----

function route() {
  // `?group=…&cluster=…`: a Rollout of another group or cluster (none: Rollgate's own, in the local cluster).
  const match = /^#\/rollouts\/([^/]+)\/([^/?]+)(?:\?(.*))?$/.exec(location.hash);
  const experiment = /^#\/experiments\/([^/]+)\/([^/?]+)(?:\?(.*))?$/.exec(location.hash);
  state.error = undefined;
  if (experiment) {
    state.view = 'experiment';
    state.detailKey = undefined;
    state.experimentKey = {
      namespace: decodeURIComponent(experiment[1] ?? ''),
      name: decodeURIComponent(experiment[2] ?? ''),
      ...keyQuery(experiment[3]),
    };
    state.experiment = undefined;
    paint();
    void loadExperiment();
  } else if (location.hash === '#/experiments') {
    state.view = 'experiments';
    state.detailKey = undefined;
    paint();
    void loadExperiments();
  } else if (match) {
    state.view = 'detail';
    state.detailKey = {
      namespace: decodeURIComponent(match[1] ?? ''),
      name: decodeURIComponent(match[2] ?? ''),
      ...keyQuery(match[3]),
    };
    state.detail = undefined;
    paint();
    void loadDetail();
  } else if (location.hash === '#/fleets') {
    state.view = 'fleets';
    state.detailKey = undefined;
    paint();
    void loadFleets();
  } else if (location.hash === '#/promotions') {
    state.view = 'promotions';
    state.detailKey = undefined;
    paint();
    void loadPromotions();
  } else {
    state.view = 'list';
    state.detailKey = undefined;
    paint();
  }
  const current = state.view === 'detail' ? 'list' : state.view === 'experiment' ? 'experiments' : state.view;
  for (const link of document.querySelectorAll('nav.views a'))
    if (link instanceof HTMLElement)
      link.setAttribute('aria-current', String(link.dataset.view === current ? 'page' : false));
  main.focus({ preventScroll: true });
}

/** Reads again what the current view shows. */
async function reload() {
  state.error = undefined;
  if (state.view === 'detail') await loadDetail();
  else if (state.view === 'promotions') await Promise.all([loadList(), loadPromotions()]);
  else if (state.view === 'experiments') await loadExperiments();
  else if (state.view === 'experiment') await loadExperiment();
  else if (state.view === 'fleets') await loadFleets();
  else await loadList();
}

async function loadFleets() {
  try {
    state.fleets = /** @type {FleetsResponse} */ (await api('/api/v1/fleets'));
    if (state.view === 'fleets') paint();
  } catch (err) {
    if (state.view === 'fleets') failed(err);
  }
}

async function loadPromotions() {
  try {
    state.promotions = /** @type {PromotionsResponse} */ (await api('/api/v1/promotions'));
    if (state.view === 'promotions') paint();
  } catch (err) {
    if (state.view === 'promotions') failed(err);
  }
}

async function loadExperiments() {
  try {
    const body = /** @type {{ items: ExperimentView[] }} */ (await api('/api/v1/experiments'));
    state.experiments = body.items;
    if (state.view === 'experiments') paint();
  } catch (err) {
    if (state.view === 'experiments') failed(err);
  }
}

async function loadExperiment() {
  const key = state.experimentKey;
  if (!key) return;
  try {
    const data = /** @type {ExperimentView} */ (await api(experimentPath(key)));
    if (state.experimentKey !== key) return;
    state.experiment = data;
    state.error = undefined;
    paint();
  } catch (err) {
    if (state.experimentKey === key) failed(err);
  }
}

async function loadList() {
  try {
    const body = /** @type {{ items: RolloutSummary[], clusters?: ClusterGroupView[] }} */ (
      await api('/api/v1/rollouts')
    );
    state.clusters = body.clusters ?? [];
    const local = state.clusters.find((c) => c.local);
    if (local) setLocalCluster(local.name);
    state.rollouts = new Map(body.items.map((r) => [keyOf(r), r]));
    if (state.view === 'list') paint();
  } catch (err) {
    if (state.view === 'list') failed(err);
  }
}

async function loadDetail() {
  const key = state.detailKey;
  if (!key) return;
  try {
    const data = /** @type {RolloutDetail} */ (await api(rolloutPath(key)));
    if (state.detailKey !== key) return;
    // A link without the group (typed by hand) names it now, so the verbs and live updates find this Rollout.
    key.group ??= data.summary.group;
    state.detail = { data, readAt: Date.now() };
    state.error = undefined;
    paint();
  } catch (err) {
    if (state.detailKey === key) failed(err);
  }
}

// ---- verbs ----

/** @param {Verb} verb asks for a confirmation in the dialog, then runs it */
function confirmVerb(verb) {
  const key = state.detailKey;
  if (!key) return;
  element('confirm-title', HTMLElement).textContent = `${verb.label}?`;
  element('confirm-text', HTMLElement).textContent = verb.confirm.replace('{r}', labelOf(key));
  element('confirm-ok', HTMLButtonElement).textContent = verb.label;
  confirmDialog.returnValue = '';
  confirmDialog.onclose = () => {
    if (confirmDialog.returnValue === 'confirm') void runVerb(verb, key);
  };
  confirmDialog.showModal();
  const cancel = confirmDialog.querySelector('button[value="cancel"]');
  if (cancel instanceof HTMLButtonElement) cancel.focus();
}

/**
 * @param {Verb} verb
 * @param {RolloutKey} key
 */
async function runVerb(verb, key) {
  try {
    const result = /** @type {{ summary: string }} */ (
      await api(verbPath(key, verb.verb), { method: 'POST' })
    );
    show(result.summary);
    void loadDetail();
  } catch (err) {
    show(
      err instanceof ApiError && err.code === 'dashboard.actions_disabled'
        ? 'Actions are disabled on this server (dashboard.actions.enabled).'
        : err instanceof Error
          ? err.message
          : String(err),
      true,
    );
  }
}

// ---- token ----

function askToken() {
  if (tokenDialog.open) return;
  tokenInput.value = '';
  tokenDialog.returnValue = '';
  tokenDialog.showModal();
}

tokenDialog.addEventListener('close', () => {
  if (tokenDialog.returnValue === 'save') setToken(tokenInput.value.trim());
  else if (tokenDialog.returnValue === 'clear') setToken(undefined);
  else return;
  restartStream();
  void reload();
});
element('token-button', HTMLButtonElement).addEventListener('click', askToken);
/** Whether the server offers sign-in: then a 401 shows the sign-in link, not the token dialog. */
let signInOffered = false;
whenUnauthorized(() => {
  if (!signInOffered) askToken();
});

// ---- sign-in (OpenID Connect, when the server offers it) ----

const signInLink = element('sign-in', HTMLAnchorElement);
const signedInAs = element('signed-in-as', HTMLElement);
const signOutButton = element('sign-out', HTMLButtonElement);

/** Reads who is signed in and shows the sign-in link or the name and the sign-out button. */
async function loadSession() {
  /** @type {import('./api.js').SessionView} */
  const session = await api('/api/v1/session');
  setSession(session);
  signInOffered = session.signIn;
  signInLink.hidden = !session.signIn || session.user !== undefined;
  signedInAs.hidden = session.user === undefined;
  signedInAs.textContent = session.user ? `Signed in as ${session.user}` : '';
  signOutButton.hidden = session.user === undefined;
}

signOutButton.addEventListener('click', () => {
  void api('/ui/auth/logout', { method: 'POST' })
    .then(() => location.assign('/ui/'))
    .catch((/** @type {unknown} */ err) => show(err instanceof Error ? err.message : String(err), true));
});

// ---- the live stream (server-sent events read through fetch, so the token goes in a header) ----

/** @type {AbortController | undefined} */
let stream;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let detailRefresh;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let promotionsRefresh;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let experimentsRefresh;

/**
 * Experiments and Fleets send no events on the stream (it carries Rollouts): while one of their views is shown it is
 * read again at this interval, so a phase that moves is seen without a reload.
 */
const EXPERIMENTS_REFRESH_MS = 5000;
setInterval(() => {
  if (
    document.visibilityState === 'visible' &&
    (state.view === 'experiments' || state.view === 'experiment' || state.view === 'fleets')
  )
    void reload();
}, EXPERIMENTS_REFRESH_MS);

/**
 * @param {boolean} on
 * @param {string} text
 */
function setLive(on, text) {
  live.textContent = text;
  live.className = on ? 'live on' : 'live off';
}

/**
 * @param {string} name the event's name: `rollout` (a summary), `deleted` (a key), `resync`
 * @param {unknown} data
 */
function onEvent(name, data) {
  if (name === 'rollout') {
    const { rollout } = /** @type {{ rollout: RolloutSummary }} */ (data);
    state.rollouts.set(keyOf(rollout), rollout);
    const key = state.detailKey;
    if (key && keyOf(rollout) === keyOf(key)) {
      // Several events arrive per pass: read the detail once they settle.
      clearTimeout(detailRefresh);
      detailRefresh = setTimeout(() => void loadDetail(), 150);
    } else if (state.view === 'list') paint();
  } else if (name === 'deleted') {
    state.rollouts.delete(keyOf(/** @type {RolloutKey} */ (data)));
    if (state.view === 'list') paint();
  } else if (name === 'resync') {
    void reload();
  }
  // An experiment step moves with its rollout; a standalone Experiment is read again by the timer below.
  if ((state.view === 'experiments' || state.view === 'experiment') && name === 'rollout') {
    clearTimeout(experimentsRefresh);
    experimentsRefresh = setTimeout(() => void reload(), 1000);
  }
  // A rollout that moves may change what an environment runs or what waits for promotion.
  if (state.view === 'promotions' && (name === 'rollout' || name === 'deleted')) {
    clearTimeout(promotionsRefresh);
    promotionsRefresh = setTimeout(() => void loadPromotions(), 1000);
  }
}

/**
 * Reads the stream until it ends (true: reconnect) or the server wants a token (false: wait for one).
 * @param {AbortController} controller
 */
async function readStream(controller) {
  const res = await fetch('/api/v1/events', {
    headers: authHeaders(),
    signal: controller.signal,
    credentials: 'same-origin',
  });
  if (res.status === 401) {
    setLive(false, signInOffered ? 'sign-in needed' : 'token needed');
    if (!signInOffered) askToken();
    return false;
  }
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
  setLive(true, 'live');
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return true;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) onEvent(name, JSON.parse(data.join('\n')));
    }
  }
}

function restartStream() {
  stream?.abort();
  const controller = new AbortController();
  stream = controller;
  void (async () => {
    for (let attempt = 0; !controller.signal.aborted; attempt += 1) {
      try {
        const again = await readStream(controller);
        if (!again) return;
        attempt = 0;
      } catch {
        if (controller.signal.aborted) return;
      }
      setLive(false, 'reconnecting…');
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * 2 ** attempt, 15000)));
      // Events were missed while away: read the state again.
      if (!controller.signal.aborted) void reload();
    }
  })();
}

takeTokenFromAddress();
// Preact owns <main> from here: the "Loading…" placeholder goes, so the first render starts from an empty node.
main.replaceChildren();
window.addEventListener('hashchange', route);
// The session first: its CSRF value goes with every later request.
void loadSession()
  .catch(() => undefined)
  .then(() => {
    void loadList().then(route);
    restartStream();
  });
