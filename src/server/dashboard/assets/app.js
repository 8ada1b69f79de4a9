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
    state.detailKey = { namespace: decodeURIComponent(match[1]), name: decodeURIComponent(match[2]) };
    state.detail = undefined;
    void loadDetail();
  } else {
    state.detailKey = undefined;
    render();
  }
  main.focus({ preventScroll: true });
}

async function loadList() {
  try {
    const body = await api('/api/v1/rollouts');
    state.rollouts = new Map(body.items.map((r) => [keyOf(r), r]));
    render();
  } catch (err) {
    renderError(err);
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
    h(
      'p',
      {},
      h(
        'button',
        { type: 'button', onclick: () => (state.detailKey ? loadDetail() : loadList()) },
        'Try again',
      ),
    ),
  );
}

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
            m.lastMeasurements.length
              ? h(
                  'ul',
                  {},
                  m.lastMeasurements.map((x) =>
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

function render() {
  if (state.detailKey) renderDetail();
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
  void (state.detailKey ? loadDetail() : loadList());
});
document.getElementById('token-button').addEventListener('click', askToken);

// ---- the live stream (server-sent events read through fetch, so the token goes in a header) ----

let stream;
let detailRefresh;

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
    } else if (!key) renderRows();
  } else if (name === 'deleted') {
    state.rollouts.delete(keyOf(data));
    if (!state.detailKey) renderRows();
  } else if (name === 'resync') {
    void (state.detailKey ? loadDetail() : loadList());
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
      if (!controller.signal.aborted) void (state.detailKey ? loadDetail() : loadList());
    }
  })();
}

window.addEventListener('hashchange', route);
void loadList().then(route);
restartStream();
