// Rollgate dashboard page: the rollout list and one rollout, live from the server's event stream.
// Plain browser JavaScript (no build step, no framework); every value from the API goes in as text, never HTML.

const TOKEN_KEY = 'rollgate.dashboardToken';
const VERBS = [
  { verb: 'promote', label: 'Promote', confirm: 'Promote {r}: clear its pause, or skip its current step?' },
  {
    verb: 'promote-full',
    label: 'Promote full',
    confirm: 'Promote {r} to 100% now, skipping the remaining steps and analysis?',
    danger: true,
  },
  { verb: 'pause', label: 'Pause', confirm: 'Pause {r}?' },
  { verb: 'resume', label: 'Resume', confirm: 'Resume {r}?' },
  { verb: 'abort', label: 'Abort', confirm: 'Abort {r}: send all traffic back to stable?', danger: true },
  { verb: 'retry', label: 'Retry', confirm: 'Retry {r}: start the steps of the current revision again?' },
  { verb: 'restart', label: 'Restart', confirm: 'Restart {r}: replace every pod created before now?' },
];

const state = {
  rollouts: new Map(),
  filter: { namespace: '', text: '' },
  detail: undefined,
  detailKey: undefined,
  /** '#/promotions' shows the pipeline; its data is read when shown and when a rollout changes. */
  view: 'list',
  promotions: undefined,
  loading: false,
};

const main = document.getElementById('main');
const live = document.getElementById('live');
const notice = document.getElementById('notice');

/** Builds an element: attributes, then children (strings become text nodes). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false || value === null) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(
      typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
    );
  }
  return el;
}

/** Replaces the page's content; nested arrays of children are flattened (replaceChildren would print them). */
function showInMain(...children) {
  main.replaceChildren(
    ...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false && c !== ''),
  );
}

/**
 * A token in the address (`rollgate dashboard` prints `/ui/?token=…`) is kept for the tab and taken out of
 * the address bar and history at once, so it is not bookmarked, shared in a screenshot or sent on.
 */
function takeTokenFromAddress() {
  const params = new URLSearchParams(location.search);
  const given = params.get('token');
  if (given === null) return;
  if (given.trim() !== '') sessionStorage.setItem(TOKEN_KEY, given.trim());
  params.delete('token');
  const rest = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
}
takeTokenFromAddress();

function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

function headers() {
  const t = token();
  return t ? { authorization: `Bearer ${t}` } : {};
}

function show(message, error = false) {
  notice.textContent = message;
  notice.className = error ? 'notice error' : 'notice';
  notice.hidden = false;
  clearTimeout(show.timer);
  show.timer = setTimeout(() => (notice.hidden = true), 6000);
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path, init = {}) {
  const res = await fetch(path, {
    ...init,
    headers: { ...headers(), ...(init.headers ?? {}) },
    credentials: 'omit',
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    if (res.status === 401) askToken();
    throw new ApiError(res.status, body.error?.code ?? 'http', body.error?.message ?? `HTTP ${res.status}`);
  }
  return body;
}

function age(iso) {
  if (!iso) return '';
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function badge(status, health) {
  return h('span', { class: `badge health-${health ?? 'unknown'}` }, status);
}

const keyOf = (r) => `${r.namespace}/${r.name}`;

// ---- routing ----

function route() {
  const match = /^#\/rollouts\/([^/]+)\/([^/]+)$/.exec(location.hash);
  if (match) {
    state.view = 'detail';
    state.detailKey = { namespace: decodeURIComponent(match[1]), name: decodeURIComponent(match[2]) };
    state.detail = undefined;
    void loadDetail();
  } else if (location.hash === '#/promotions') {
    state.view = 'promotions';
    state.detailKey = undefined;
    render();
    void loadPromotions();
  } else {
    state.view = 'list';
    state.detailKey = undefined;
    render();
  }
  for (const link of document.querySelectorAll('nav.views a'))
    link.setAttribute(
      'aria-current',
      String(link.dataset.view === (state.view === 'detail' ? 'list' : state.view) ? 'page' : false),
    );
  main.focus({ preventScroll: true });
}

/** Reloads what the current view shows. */
function reload() {
  if (state.view === 'detail') return loadDetail();
  if (state.view === 'promotions') return Promise.all([loadList(), loadPromotions()]);
  return loadList();
}

async function loadPromotions() {
  try {
    state.promotions = await api('/api/v1/promotions');
    if (state.view === 'promotions') render();
  } catch (err) {
    if (state.view === 'promotions') renderError(err);
  }
}

async function loadList() {
  try {
    const body = await api('/api/v1/rollouts');
    state.rollouts = new Map(body.items.map((r) => [keyOf(r), r]));
    if (state.view === 'list') render();
  } catch (err) {
    if (state.view === 'list') renderError(err);
  }
}

async function loadDetail() {
  const key = state.detailKey;
  if (!key) return;
  try {
    const detail = await api(
      `/api/v1/rollouts/${encodeURIComponent(key.namespace)}/${encodeURIComponent(key.name)}`,
    );
    if (state.detailKey !== key) return;
    state.detail = detail;
    render();
  } catch (err) {
    renderError(err);
  }
}

function renderError(err) {
  showInMain(
    h('h1', {}, err.status === 401 ? 'Token needed' : 'Could not load'),
    h('p', {}, err.message),
    h('p', {}, h('button', { type: 'button', onclick: () => void reload() }, 'Try again')),
  );
}

/** What is left of a timed pause, as the step shows it. */
function remainingText(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s === 0) return ' · due';
  return s < 120 ? ` · ${s}s left` : ` · ${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''} left`;
}

// A timed pause counts down between reads; the server's next event brings the real state.
setInterval(() => {
  for (const el of document.querySelectorAll('.remaining'))
    el.textContent = remainingText(Number(el.dataset.ends) - Date.now());
}, 1000);

// ---- the list ----

function filtered() {
  const text = state.filter.text.trim().toLowerCase();
  return [...state.rollouts.values()]
    .filter((r) => !state.filter.namespace || r.namespace === state.filter.namespace)
    .filter(
      (r) =>
        !text ||
        [r.name, r.namespace, r.status, r.source, r.commit, ...r.images.stable, ...r.images.canary]
          .join(' ')
          .toLowerCase()
          .includes(text),
    )
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}

function renderList() {
  const namespaces = [...new Set([...state.rollouts.values()].map((r) => r.namespace))].sort();
  const nsSelect = h(
    'select',
    {
      id: 'filter-namespace',
      onchange: (e) => {
        state.filter.namespace = e.target.value;
        renderRows();
      },
    },
    h('option', { value: '' }, 'All namespaces'),
    namespaces.map((ns) => h('option', { value: ns, selected: ns === state.filter.namespace }, ns)),
  );
  const text = h('input', {
    id: 'filter-text',
    type: 'search',
    value: state.filter.text,
    placeholder: 'name, image, commit…',
    oninput: (e) => {
      state.filter.text = e.target.value;
      renderRows();
    },
  });
  const tbody = h('tbody', { id: 'rollout-rows' });
  showInMain(
    h('h1', {}, 'Rollouts'),
    h(
      'div',
      { class: 'filters', role: 'search' },
      h('label', { for: 'filter-namespace' }, 'Namespace', nsSelect),
      h('label', { for: 'filter-text' }, 'Filter', text),
      h('span', { id: 'count', class: 'muted', 'aria-live': 'polite' }),
    ),
    h(
      'table',
      { class: 'cards' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Name', 'Namespace', 'Status', 'Step', 'Weight', 'Images', 'Ready', 'Source', 'Age'].map((c) =>
            h('th', { scope: 'col' }, c),
          ),
        ),
      ),
      tbody,
    ),
  );
  renderRows();
}

function renderRows() {
  const tbody = document.getElementById('rollout-rows');
  if (!tbody) return;
  const rows = filtered();
  document.getElementById('count').textContent = `${rows.length} of ${state.rollouts.size} rollouts`;
  tbody.replaceChildren(
    ...rows.map((r) =>
      h(
        'tr',
        { 'data-rollout': keyOf(r) },
        h(
          'td',
          { 'data-label': 'Name' },
          h(
            'a',
            { href: `#/rollouts/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}` },
            r.name,
          ),
        ),
        h('td', { 'data-label': 'Namespace' }, r.namespace),
        h('td', { 'data-label': 'Status' }, badge(r.status, r.health), r.aborted ? ' aborted' : ''),
        h('td', { 'data-label': 'Step' }, r.strategy === 'BlueGreen' ? 'blue-green' : r.step),
        h(
          'td',
          { 'data-label': 'Weight' },
          r.strategy === 'BlueGreen' ? '-' : `${r.actualWeight ?? 0}% (set ${r.setWeight}%)`,
        ),
        h('td', { 'data-label': 'Images' }, imagesText(r)),
        h('td', { 'data-label': 'Ready' }, `${r.ready}/${r.desired}`),
        h(
          'td',
          { 'data-label': 'Source' },
          r.source ? `${r.source}${r.commit ? ` @ ${r.commit.slice(0, 8)}` : ''}` : '-',
        ),
        h('td', { 'data-label': 'Age' }, age(r.createdAt)),
      ),
    ),
  );
  if (rows.length === 0)
    tbody.append(
      h(
        'tr',
        {},
        h(
          'td',
          { colspan: 9, class: 'muted' },
          state.rollouts.size === 0 ? 'No rollouts in the cluster.' : 'No rollout matches the filter.',
        ),
      ),
    );
}

function imagesText(r) {
  const parts = [];
  if (r.images.stable.length) parts.push(h('div', {}, 'stable: ', h('code', {}, r.images.stable.join(', '))));
  if (r.images.canary.length) parts.push(h('div', {}, 'canary: ', h('code', {}, r.images.canary.join(', '))));
  return parts.length ? parts : '-';
}

// ---- one rollout ----

function renderDetail() {
  const d = state.detail;
  const key = state.detailKey;
  if (!d) {
    showInMain(h('p', { class: 'muted' }, `Loading ${key.namespace}/${key.name}…`));
    return;
  }
  const { summary: s, view: v, tree: t } = d;
  const facts = [
    ['Status', badge(s.status, s.health)],
    ['Strategy', s.strategy],
    ['Step', s.strategy === 'BlueGreen' ? '-' : s.step],
    [
      'Weight',
      s.strategy === 'BlueGreen' ? '-' : `canary ${v.weights.canary}% · stable ${v.weights.stable}%`,
    ],
    ['Replicas', `ready ${v.replicas.ready}/${v.replicas.desired}, updated ${v.replicas.updated}`],
    ['Stable image', s.images.stable.join(', ') || '-'],
    ['Canary image', s.images.canary.join(', ') || '-'],
    ['Source', s.source ? `${s.source}${s.commit ? ` @ ${s.commit.slice(0, 12)}` : ''}` : '-'],
    ['Author', s.author ?? '-'],
    ['Age', age(s.createdAt)],
  ];
  const steps = v.steps.length
    ? h(
        'ol',
        { class: 'steps', 'aria-label': 'Steps' },
        v.steps.map((step) =>
          h(
            'li',
            { class: step.state, 'aria-current': step.state === 'current' ? 'step' : undefined },
            `${{ done: '✔ ', current: '▶ ', aborted: '✘ ', pending: '' }[step.state]}${step.index}: ${step.description}`,
            step.pauseRemainingSeconds !== undefined
              ? h(
                  'span',
                  { class: 'remaining', 'data-ends': Date.now() + step.pauseRemainingSeconds * 1000 },
                  remainingText(step.pauseRemainingSeconds * 1000),
                )
              : '',
            h('span', { class: 'visually-hidden' }, ` (${step.state === 'pending' ? 'to do' : step.state})`),
          ),
        ),
      )
    : h('p', { class: 'muted' }, 'No steps.');
  showInMain(
    h('p', {}, h('a', { href: '#/' }, '← All rollouts')),
    h('h1', {}, `${s.name} `, h('span', { class: 'muted' }, s.namespace)),
    v.message ? h('p', {}, v.message) : '',
    h(
      'dl',
      { class: 'facts' },
      facts.map(([dt, dd]) => h('div', {}, h('dt', {}, dt), h('dd', {}, dd))),
    ),
    h(
      'div',
      { class: 'verbs', role: 'group', 'aria-label': 'Actions' },
      VERBS.map((v2) =>
        h(
          'button',
          {
            type: 'button',
            class: v2.danger ? 'danger' : undefined,
            'data-verb': v2.verb,
            onclick: () => confirmVerb(v2),
          },
          v2.label,
        ),
      ),
    ),
    h('h2', {}, 'Steps'),
    steps,
    s.strategy === 'Canary'
      ? [
          h('h2', {}, 'Traffic'),
          h(
            'div',
            {
              class: 'weight',
              role: 'img',
              'aria-label': `canary ${v.weights.canary}%, stable ${v.weights.stable}%`,
            },
            h('div', { class: 'canary', 'data-w': v.weights.canary }),
            h('div', { class: 'stable', 'data-w': v.weights.stable }),
          ),
          h('p', { class: 'muted' }, `canary ${v.weights.canary}% · stable ${v.weights.stable}%`),
        ]
      : '',
    h('h2', {}, 'ReplicaSets and pods'),
    t.revisions.length
      ? t.revisions.map((rev) =>
          rev.replicaSets.map((rs) =>
            h(
              'div',
              { class: 'rs' },
              h('strong', {}, `revision ${rev.revision}`),
              ' ',
              rev.commit
                ? h(
                    'span',
                    { class: 'origin' },
                    'commit ',
                    shortSha(rev.commit),
                    rev.author ? ` by ${rev.author} ` : ' ',
                  )
                : '',
              rs.role ? h('span', { class: 'badge health-progressing' }, rs.role) : '',
              ' ',
              h('code', {}, rs.name),
              ' ',
              badge(rs.status, rs.health),
              ` ready ${rs.ready}/${rs.desired}`,
              rs.pods.length
                ? h(
                    'ul',
                    {},
                    rs.pods.map((p) =>
                      h(
                        'li',
                        {},
                        h('code', {}, p.name),
                        ' ',
                        badge(p.status, p.health),
                        p.restarts ? ` restarts ${p.restarts}` : '',
                      ),
                    ),
                  )
                : '',
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'No ReplicaSets yet.'),
    h('h2', {}, 'Analysis'),
    analysis(v.analysisRunDetails ?? []),
    h('h2', {}, 'Conditions'),
    v.conditions.length
      ? h(
          'table',
          { class: 'cards' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Type', 'Status', 'Reason', 'Message'].map((c) => h('th', { scope: 'col' }, c)),
            ),
          ),
          h(
            'tbody',
            {},
            v.conditions.map((c) =>
              h(
                'tr',
                {},
                h('td', { 'data-label': 'Type' }, c.type),
                h('td', { 'data-label': 'Status' }, c.status),
                h('td', { 'data-label': 'Reason' }, c.reason ?? ''),
                h('td', { 'data-label': 'Message' }, c.message ?? ''),
              ),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'None.'),
    h('h2', {}, 'Events'),
    d.events.length
      ? h(
          'table',
          { class: 'cards' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Age', 'Type', 'Reason', 'Message'].map((c) => h('th', { scope: 'col' }, c)),
            ),
          ),
          h(
            'tbody',
            {},
            d.events.map((e) =>
              h(
                'tr',
                {},
                h('td', { 'data-label': 'Age' }, age(e.lastTimestamp)),
                h('td', { 'data-label': 'Type' }, e.type),
                h('td', { 'data-label': 'Reason' }, e.reason),
                h('td', { 'data-label': 'Message' }, e.count > 1 ? `${e.message} (×${e.count})` : e.message),
              ),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'None.'),
  );
  // Widths through the DOM, not inline style attributes: the page's CSP allows no inline styles.
  for (const el of main.querySelectorAll('.weight > div')) el.style.width = `${Number(el.dataset.w)}%`;
}

function analysis(runs) {
  if (runs.length === 0) return h('p', { class: 'muted' }, 'No analysis runs.');
  return runs.map((run) =>
    h(
      'div',
      { class: 'rs' },
      h('strong', {}, run.name),
      ' ',
      badge(
        run.phase,
        { Successful: 'healthy', Failed: 'degraded', Error: 'degraded', Inconclusive: 'paused' }[run.phase] ??
          'progressing',
      ),
      run.message ? h('p', {}, run.message) : '',
      h(
        'ul',
        {},
        run.metrics.map((m) =>
          h(
            'li',
            {},
            h('strong', {}, m.name),
            ` ${m.phase}: ${m.successful} ok, ${m.failed} failed, ${m.inconclusive} inconclusive, ${m.error} error`,
            m.successCondition || m.failureCondition
              ? h(
                  'div',
                  { class: 'muted' },
                  m.successCondition ? ['success when ', h('code', {}, m.successCondition)] : '',
                  m.successCondition && m.failureCondition ? '; ' : '',
                  m.failureCondition ? ['failure when ', h('code', {}, m.failureCondition)] : '',
                )
              : '',
            measurementChart(m),
            m.lastMeasurements.length
              ? h(
                  'ul',
                  {},
                  m.lastMeasurements
                    .slice(-3)
                    .map((x) =>
                      h(
                        'li',
                        {},
                        `${x.phase}${x.value !== undefined ? ` value ${x.value}` : ''}${x.message ? ` — ${x.message}` : ''}`,
                      ),
                    ),
                )
              : '',
          ),
        ),
      ),
    ),
  );
}

// ---- promotions ----

const CHECKS_HEALTH = { success: 'healthy', failure: 'degraded', pending: 'progressing' };
const SYNC_HEALTH = { Synced: 'healthy', Degraded: 'paused', Failed: 'degraded' };

function shortSha(sha, n = 8) {
  return sha ? h('code', { title: sha }, sha.slice(0, n)) : '-';
}

function table(columns, rows, empty) {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty);
  return h(
    'table',
    { class: 'cards' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((cells) =>
        h(
          'tr',
          {},
          // One wrapper per cell: on a phone the cell is a flex row (label, content), and content made of
          // several parts must stay one item that wraps.
          cells.map((cell, i) => h('td', { 'data-label': columns[i] }, h('div', { class: 'cell' }, cell))),
        ),
      ),
    ),
  );
}

/** Whether `url` may be a link: http(s) only (a forge's answer is not trusted to be a web address). */
function webAddress(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:';
  } catch {
    return false;
  }
}

/** A pull request: a link to the forge when its address is a web one, else its number and title as text. */
function pullLink(pr) {
  const label = `#${pr.number}${pr.title ? ` ${pr.title}` : ''}`;
  if (!webAddress(pr.url)) return h('span', { title: 'the forge gave no web address' }, label);
  return h('a', { href: pr.url, rel: 'noopener noreferrer', target: '_blank' }, label);
}

function environmentCard(env) {
  return h(
    'li',
    { class: 'env', 'data-environment': env.source },
    h('h3', {}, env.source),
    h(
      'dl',
      { class: 'facts compact' },
      h('div', {}, h('dt', {}, 'Branch'), h('dd', {}, `${env.branch}:${env.path}`)),
      h('div', {}, h('dt', {}, 'Commit'), h('dd', {}, shortSha(env.commit, 12))),
      h(
        'div',
        {},
        h('dt', {}, 'Sync'),
        h(
          'dd',
          {},
          env.syncPhase ? badge(env.syncPhase, SYNC_HEALTH[env.syncPhase]) : '-',
          env.syncedAt ? ` ${age(env.syncedAt)} ago` : '',
        ),
      ),
    ),
    env.rollouts.length
      ? h(
          'ul',
          { class: 'env-rollouts' },
          env.rollouts.map((r) =>
            h(
              'li',
              {},
              h(
                'a',
                { href: `#/rollouts/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}` },
                `${r.namespace}/${r.name}`,
              ),
              ' ',
              badge(r.status, r.health),
              h('div', {}, imagesText(r)),
              r.commit
                ? h('div', { class: 'muted' }, 'from ', shortSha(r.commit), r.author ? ` by ${r.author}` : '')
                : '',
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'No rollouts.'),
  );
}

function renderPromotions() {
  const p = state.promotions;
  if (!p) {
    showInMain(h('h1', {}, 'Promotions'), h('p', { class: 'muted' }, 'Loading…'));
    return;
  }
  showInMain(
    h('h1', {}, 'Promotions'),
    p.environments.length === 0
      ? h('p', { class: 'muted' }, 'No sources or promotions are configured where this dashboard runs.')
      : [
          h('h2', { id: 'pipeline-title' }, 'Environments'),
          h(
            'ol',
            { class: 'pipeline', 'aria-labelledby': 'pipeline-title' },
            p.environments.map(environmentCard),
          ),
        ],
    p.promotions.map((promotion) =>
      h(
        'section',
        {
          class: 'promotion',
          'data-promotion': promotion.name,
          'aria-labelledby': `promotion-${promotion.name}`,
        },
        h(
          'h2',
          { id: `promotion-${promotion.name}` },
          `${promotion.name}: ${promotion.from} → ${promotion.to}`,
        ),
        table(
          ['Rollout', 'Revision', 'Ready to promote', 'Commit status', 'Pull request', 'Checks'],
          promotion.looks.map((look) => [
            look.rollout,
            look.revision ? h('code', {}, look.revision) : '-',
            [look.promotable ? 'yes' : 'no', h('div', { class: 'muted' }, look.reason)],
            look.commitStatus
              ? [
                  badge(look.commitStatus.state, CHECKS_HEALTH[look.commitStatus.state]),
                  ' ',
                  look.commitStatus.context,
                  ' on ',
                  shortSha(look.commitStatus.sha),
                  h('div', { class: 'muted' }, look.commitStatus.description),
                ]
              : '-',
            look.pullRequest
              ? pullLink(look.pullRequest)
              : look.error
                ? h('span', { class: 'bad' }, `forge: ${look.error.message}`)
                : 'none open',
            look.pullRequest?.checks
              ? badge(look.pullRequest.checks, CHECKS_HEALTH[look.pullRequest.checks])
              : '-',
          ]),
          `No Rollout of source ${promotion.from} is carried by this promotion.`,
        ),
      ),
    ),
    h('h2', {}, 'History'),
    table(
      ['When', 'Promotion', 'Rollout', 'Pull request'],
      p.history.map((e) => [
        e.at ? `${age(e.at)} ago` : '-',
        e.promotion,
        e.rollout,
        [e.pullRequest.url ? pullLink(e.pullRequest) : `#${e.pullRequest.number}`, ` ${e.event}`],
      ]),
      'No promotion pull request opened, merged or closed yet (or the cluster no longer keeps its Events).',
    ),
  );
}

// ---- the measurements chart ----

const SVG_NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs))
    if (value !== undefined) el.setAttribute(name, String(value));
  for (const child of children.flat(Infinity))
    if (child !== undefined && child !== null && child !== false)
      el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return el;
}

let chartIds = 0;

/** An inline SVG of a metric's measured values over time, with a title, a description and the values as a table. */
function measurementChart(metric) {
  const points = metric.lastMeasurements.filter((m) => typeof m.number === 'number');
  if (points.length === 0) return '';
  const values = points.map((m) => m.number);
  let low = Math.min(...values);
  let high = Math.max(...values);
  if (low === high) {
    low -= Math.abs(low) * 0.1 || 1;
    high += Math.abs(high) * 0.1 || 1;
  }
  const width = 320;
  const height = 96;
  const pad = { left: 44, right: 8, top: 8, bottom: 8 };
  const x = (i) =>
    pad.left +
    (points.length === 1
      ? (width - pad.left - pad.right) / 2
      : (i * (width - pad.left - pad.right)) / (points.length - 1));
  const y = (v) => pad.top + ((high - v) * (height - pad.top - pad.bottom)) / (high - low);
  const id = `chart-${(chartIds += 1)}`;
  const latest = points[points.length - 1];
  const summary = `${points.length} measurement${points.length === 1 ? '' : 's'} from ${Math.min(...values)} to ${Math.max(...values)}, latest ${latest.number} (${latest.phase})`;
  const fmt = (v) => String(Number(v.toPrecision(4)));
  return h(
    'figure',
    { class: 'chart' },
    svg(
      'svg',
      {
        viewBox: `0 0 ${width} ${height}`,
        role: 'img',
        'aria-labelledby': `${id}-title ${id}-desc`,
        focusable: 'false',
      },
      svg('title', { id: `${id}-title` }, `${metric.name} measured values`),
      svg('desc', { id: `${id}-desc` }, summary),
      svg('line', { class: 'axis', x1: pad.left, x2: width - pad.right, y1: y(high), y2: y(high) }),
      svg('line', { class: 'axis', x1: pad.left, x2: width - pad.right, y1: y(low), y2: y(low) }),
      svg('text', { class: 'tick', x: pad.left - 4, y: y(high) + 4, 'text-anchor': 'end' }, fmt(high)),
      svg('text', { class: 'tick', x: pad.left - 4, y: y(low) + 4, 'text-anchor': 'end' }, fmt(low)),
      points.length > 1
        ? svg('polyline', { class: 'line', points: points.map((m, i) => `${x(i)},${y(m.number)}`).join(' ') })
        : '',
      points.map((m, i) =>
        svg('circle', { class: `point phase-${m.phase}`, cx: x(i), cy: y(m.number), r: 3.5 }),
      ),
    ),
    h(
      'figcaption',
      {},
      h(
        'details',
        {},
        h('summary', {}, `${metric.name}: ${summary}`),
        table(
          ['Measured at', 'Value', 'Phase'],
          points.map((m) => [m.finishedAt ?? m.startedAt ?? '-', m.value ?? '', m.phase]),
          '',
        ),
      ),
    ),
  );
}

function render() {
  if (state.view === 'detail') renderDetail();
  else if (state.view === 'promotions') renderPromotions();
  else renderList();
}

// ---- verbs ----

const confirmDialog = document.getElementById('confirm-dialog');

function confirmVerb(v) {
  const key = state.detailKey;
  document.getElementById('confirm-title').textContent = `${v.label}?`;
  document.getElementById('confirm-text').textContent = v.confirm.replace(
    '{r}',
    `${key.namespace}/${key.name}`,
  );
  document.getElementById('confirm-ok').textContent = v.label;
  confirmDialog.returnValue = '';
  confirmDialog.onclose = () => {
    if (confirmDialog.returnValue === 'confirm') void runVerb(v, key);
  };
  confirmDialog.showModal();
  confirmDialog.querySelector('button[value="cancel"]').focus();
}

async function runVerb(v, key) {
  try {
    const result = await api(
      `/api/v1/rollouts/${encodeURIComponent(key.namespace)}/${encodeURIComponent(key.name)}/${v.verb}`,
      { method: 'POST' },
    );
    show(result.summary);
    void loadDetail();
  } catch (err) {
    show(
      err.code === 'dashboard.actions_disabled'
        ? 'Actions are disabled on this server (dashboard.actions.enabled).'
        : err.message,
      true,
    );
  }
}

// ---- token ----

const tokenDialog = document.getElementById('token-dialog');

function askToken() {
  if (tokenDialog.open) return;
  document.getElementById('token-input').value = '';
  tokenDialog.returnValue = '';
  tokenDialog.showModal();
}

tokenDialog.addEventListener('close', () => {
  if (tokenDialog.returnValue === 'save')
    sessionStorage.setItem(TOKEN_KEY, document.getElementById('token-input').value.trim());
  else if (tokenDialog.returnValue === 'clear') sessionStorage.removeItem(TOKEN_KEY);
  else return;
  restartStream();
  void reload();
});
document.getElementById('token-button').addEventListener('click', askToken);

// ---- the live stream (server-sent events read through fetch, so the token goes in a header) ----

let stream;
let detailRefresh;
let promotionsRefresh;

function setLive(on, text) {
  live.textContent = text;
  live.className = on ? 'live on' : 'live off';
}

function onEvent(name, data) {
  if (name === 'rollout') {
    state.rollouts.set(keyOf(data.rollout), data.rollout);
    const key = state.detailKey;
    if (key && keyOf(data.rollout) === keyOf(key)) {
      // Several events arrive per pass: read the detail once they settle.
      clearTimeout(detailRefresh);
      detailRefresh = setTimeout(() => void loadDetail(), 150);
    } else if (state.view === 'list') renderRows();
  } else if (name === 'deleted') {
    state.rollouts.delete(keyOf(data));
    if (state.view === 'list') renderRows();
  } else if (name === 'resync') {
    void reload();
  }
  // A rollout that moves may change what an environment runs or what waits for promotion.
  if (state.view === 'promotions' && (name === 'rollout' || name === 'deleted')) {
    clearTimeout(promotionsRefresh);
    promotionsRefresh = setTimeout(() => void loadPromotions(), 1000);
  }
}

async function readStream(controller) {
  const res = await fetch('/api/v1/events', {
    headers: headers(),
    signal: controller.signal,
    credentials: 'omit',
  });
  if (res.status === 401) {
    setLive(false, 'token needed');
    askToken();
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
      await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** attempt, 15000)));
      // Events were missed while away: read the state again.
      if (!controller.signal.aborted) void reload();
    }
  })();
}

window.addEventListener('hashchange', route);
void loadList().then(route);
restartStream();
