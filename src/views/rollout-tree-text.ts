// The text of `rollgate get rollout` and `rollgate list rollouts`: a pure function of the view and `now`, coloured or plain.
import type { NodeHealth, RolloutListRow, RolloutListWideFacts, RolloutTree } from './rollout-tree.ts';

/** How text is drawn: `now` for ages, `color` for ANSI colours (a TTY without NO_COLOR). */
export interface TextStyle {
  now: Date;
  color: boolean;
  /** `-o wide`: the tables gain columns (the tree READY and CREATED; the list GROUP, AGE and IMAGES). */
  wide?: boolean;
}

/** A node's status icon, by health (Argo's plugin's icons). */
export const ICON: Record<NodeHealth, string> = {
  healthy: '✔',
  progressing: '◌',
  paused: '॥',
  degraded: '✖',
  scaledDown: '•',
  unknown: '⚠',
};

/** ANSI SGR codes per health: green, yellow, grey, red. */
export const COLOUR: Record<NodeHealth, string> = {
  healthy: '32',
  progressing: '33',
  paused: '90',
  degraded: '31',
  scaledDown: '90',
  unknown: '33',
};

/** `text` in ANSI colour `code` when the style colours, else as is. */
export function paint(text: string, code: string, style: TextStyle): string {
  return style.color ? `\u001b[${code}m${text}\u001b[0m` : text;
}

/** `42s`, `3m12s`, `47m`, `5h3m`, `20h`, `4d`: kubectl's way, short while it is recent and exact. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return `${minutes}m${seconds % 60 === 0 ? '' : `${seconds % 60}s`}`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return `${hours}h${minutes % 60 === 0 ? '' : `${minutes % 60}m`}`;
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}

/** The age of an object created at `createdAt` (empty when unknown). */
export function ageOf(createdAt: string | undefined, now: Date): string {
  const at = createdAt === undefined ? Number.NaN : Date.parse(createdAt);
  return Number.isNaN(at) ? '' : formatAge(now.getTime() - at);
}

/** One row of the tree table, before its columns are padded. */
interface Row {
  prefix: string;
  icon: string;
  name: string;
  kind: string;
  health?: NodeHealth;
  status: string;
  age: string;
  info: string;
  /** `-o wide`: ready of desired (a ReplicaSet's pods, a pod's containers) and the exact creation time. */
  ready?: string;
  createdAt?: string;
}

function headerLines(tree: RolloutTree, style: TextStyle): string[] {
  const label = (name: string): string => `${name}:`.padEnd(17);
  const lines = [
    `${label('Name')}${tree.name}`,
    `${label('Namespace')}${tree.namespace}`,
    `${label('Status')}${paint(`${ICON[tree.health]} ${tree.status}`, COLOUR[tree.health], style)}`,
  ];
  if (tree.message !== undefined) lines.push(`${label('Message')}${tree.message}`);
  lines.push(`${label('Strategy')}${tree.strategy}`);
  if (tree.step !== undefined) lines.push(`${label('  Step')}${tree.step.index}/${tree.step.count}`);
  if (tree.setWeight !== undefined) lines.push(`${label('  SetWeight')}${tree.setWeight}`);
  if (tree.actualWeight !== undefined) lines.push(`${label('  ActualWeight')}${tree.actualWeight}`);
  tree.images.forEach((entry, index) => {
    const roles = entry.roles.map((role) => ` (${role})`).join('');
    lines.push(`${index === 0 ? label('Images') : ' '.repeat(17)}${entry.image}${roles}`);
  });
  const { desired, current, updated, ready, available } = tree.replicas;
  lines.push('Replicas:');
  lines.push(`${label('  Desired')}${desired}`);
  lines.push(`${label('  Current')}${current}`);
  lines.push(`${label('  Updated')}${updated}`);
  lines.push(`${label('  Ready')}${ready}`);
  lines.push(`${label('  Available')}${available}`);
  return lines;
}

function deadlineInfo(deadline: string, now: Date): string {
  const at = Date.parse(deadline);
  if (Number.isNaN(at)) return '';
  return at <= now.getTime() ? 'delay:passed' : `delay:${formatAge(at - now.getTime())}`;
}

function treeRows(tree: RolloutTree, style: TextStyle): Row[] {
  const { now } = style;
  const rows: Row[] = [
    {
      prefix: '',
      icon: '⟳',
      name: tree.name,
      kind: 'Rollout',
      health: tree.health,
      status: tree.status,
      age: ageOf(tree.createdAt, now),
      info: '',
      ready: `${tree.replicas.ready}/${tree.replicas.desired}`,
      ...(tree.createdAt !== undefined ? { createdAt: tree.createdAt } : {}),
    },
  ];
  tree.revisions.forEach((revision, revisionIndex) => {
    const lastRevision = revisionIndex === tree.revisions.length - 1;
    rows.push({
      prefix: lastRevision ? '└──' : '├──',
      icon: '#',
      name: `revision:${revision.revision}`,
      kind: '',
      status: '',
      age: '',
      // Whose change the revision is, when it came from Git: the short commit and its author.
      info: revision.commit
        ? `commit ${revision.commit.slice(0, 8)}${revision.author ? ` by ${revision.author}` : ''}`
        : '',
    });
    const under = lastRevision ? '   ' : '│  ';
    const children = [
      ...revision.replicaSets.map((rs) => ({ rs, run: undefined })),
      ...revision.analysisRuns.map((run) => ({ rs: undefined, run })),
    ];
    children.forEach(({ rs, run }, childIndex) => {
      const lastChild = childIndex === children.length - 1;
      const branch = `${under}${lastChild ? '└──' : '├──'}`;
      if (rs !== undefined) {
        const info = [rs.role, rs.scaleDownDeadline ? deadlineInfo(rs.scaleDownDeadline, now) : '']
          .filter((part) => part !== undefined && part !== '')
          .join(',');
        rows.push({
          prefix: branch,
          icon: '⧉',
          name: rs.name,
          kind: 'ReplicaSet',
          health: rs.health,
          status: rs.status,
          age: ageOf(rs.createdAt, now),
          info,
          ready: `${rs.ready}/${rs.desired}`,
          createdAt: rs.createdAt,
        });
        const podUnder = `${under}${lastChild ? '   ' : '│  '}`;
        rs.pods.forEach((pod, podIndex) => {
          const restarts = pod.restarts > 0 ? `,restarts:${pod.restarts}` : '';
          rows.push({
            prefix: `${podUnder}${podIndex === rs.pods.length - 1 ? '└──' : '├──'}`,
            icon: '□',
            name: pod.name,
            kind: 'Pod',
            health: pod.health,
            status: pod.status,
            age: ageOf(pod.createdAt, now),
            info: `ready:${pod.readyContainers}/${pod.containers}${restarts}`,
            ready: `${pod.readyContainers}/${pod.containers}`,
            ...(pod.createdAt !== undefined ? { createdAt: pod.createdAt } : {}),
          });
        });
      } else if (run !== undefined) {
        const counts = [
          run.successful ? `${ICON.healthy} ${run.successful}` : '',
          run.failed ? `${ICON.degraded} ${run.failed}` : '',
        ].filter((part) => part !== '');
        rows.push({
          prefix: branch,
          icon: 'α',
          name: run.name,
          kind: 'AnalysisRun',
          health: run.health,
          status: run.status,
          age: ageOf(run.createdAt, now),
          info: counts.join(','),
          ...(run.createdAt !== undefined ? { createdAt: run.createdAt } : {}),
        });
      }
    });
  });
  return rows;
}

/** Pads every column to its widest cell, measuring the text before it is coloured. */
export function table(
  header: string[],
  cells: Array<Array<{ text: string; colour?: string }>>,
  style: TextStyle,
): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...cells.map((row) => [...(row[column]?.text ?? '')].length)),
  );
  const line = (row: Array<{ text: string; colour?: string }>): string =>
    row
      .map((cell, column) => {
        const last = column === row.length - 1;
        const padded = last
          ? cell.text
          : cell.text + ' '.repeat((widths[column] ?? 0) - [...cell.text].length);
        return cell.colour === undefined ? padded : paint(padded, cell.colour, style);
      })
      .join('  ')
      .trimEnd();
  return [line(header.map((text) => ({ text }))), ...cells.map(line)];
}

/** The whole `get rollout` text: header, a blank line, then the tree table. */
export function formatRolloutTree(tree: RolloutTree, style: TextStyle): string {
  const rows = treeRows(tree, style);
  const cells = rows.map((row) => [
    { text: `${row.prefix}${row.icon} ${row.name}` },
    { text: row.kind },
    row.health === undefined
      ? { text: '' }
      : { text: `${ICON[row.health]} ${row.status}`, colour: COLOUR[row.health] },
    { text: row.age },
    ...(style.wide ? [{ text: row.ready ?? '' }, { text: row.createdAt ?? '' }] : []),
    { text: row.info },
  ]);
  const header = style.wide
    ? ['NAME', 'KIND', 'STATUS', 'AGE', 'READY', 'CREATED', 'INFO']
    : ['NAME', 'KIND', 'STATUS', 'AGE', 'INFO'];
  const lines = [...headerLines(tree, style), '', ...table(header, cells, style)];
  return `${lines.join('\n')}\n`;
}

/**
 * `list rollouts` as a table; with `allNamespaces` the first column is NAMESPACE. A GROUP column follows
 * NAME only when the rows come from both groups (rollgate.dev and argoproj.io), where a name may be two
 * Rollouts; a list of one group reads exactly as Argo's plugin prints it. `style.wide` shows GROUP always
 * and adds AGE and IMAGES (the rows then carry their wide facts).
 */
export function formatRolloutList(
  rows: Array<RolloutListRow & Partial<RolloutListWideFacts> & { cluster?: string }>,
  allNamespaces: boolean,
  style: TextStyle,
): string {
  const header = [
    'NAME',
    'STRATEGY',
    'STATUS',
    'STEP',
    'SET-WEIGHT',
    'READY',
    'DESIRED',
    'UP-TO-DATE',
    'AVAILABLE',
  ];
  const cells = rows.map((row) => [
    { text: row.name },
    { text: row.strategy },
    { text: `${ICON[row.health]} ${row.status}`, colour: COLOUR[row.health] },
    { text: row.step },
    { text: row.setWeight },
    { text: `${row.ready}/${row.desired}` },
    { text: String(row.desired) },
    { text: String(row.upToDate) },
    { text: String(row.available) },
  ]);
  if (style.wide) {
    header.push('AGE', 'IMAGES');
    cells.forEach((row, index) => {
      const facts = rows[index];
      row.push({ text: ageOf(facts?.createdAt, style.now) }, { text: (facts?.images ?? []).join(',') });
    });
  }
  if (style.wide || new Set(rows.map((row) => row.group)).size > 1) {
    header.splice(1, 0, 'GROUP');
    cells.forEach((row, index) => row.splice(1, 0, { text: rows[index]?.group ?? '' }));
  }
  if (allNamespaces) {
    header.unshift('NAMESPACE');
    cells.forEach((row, index) => row.unshift({ text: rows[index]?.namespace ?? '' }));
  }
  // Listed across clusters (`list rollouts --all-clusters`): each row names its cluster first.
  if (rows.some((row) => row.cluster !== undefined)) {
    header.unshift('CLUSTER');
    cells.forEach((row, index) => row.unshift({ text: rows[index]?.cluster ?? '' }));
  }
  return `${table(header, cells, style).join('\n')}\n`;
}
