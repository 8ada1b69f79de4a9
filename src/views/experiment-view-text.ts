// The text of `rollgate get experiment` and `rollgate list experiments`: a pure function of the view and `now`, coloured or plain.
import type { ExperimentListRow, ExperimentView } from './experiment-view.ts';
import { ageOf, COLOUR, formatAge, ICON, paint, table, type TextStyle } from './rollout-tree-text.ts';
import type { NodeHealth } from './rollout-tree.ts';

const label = (name: string): string => `${name}:`.padEnd(17);

function headerLines(view: ExperimentView, style: TextStyle): string[] {
  const lines = [
    `${label('Name')}${view.name}`,
    `${label('Namespace')}${view.namespace}`,
    `${label('Status')}${paint(`${ICON[view.health]} ${view.status}`, COLOUR[view.health], style)}`,
  ];
  if (view.message !== undefined) lines.push(`${label('Message')}${view.message}`);
  if (view.rollout !== undefined) lines.push(`${label('Rollout')}${view.rollout}`);
  if (view.duration !== undefined) lines.push(`${label('Duration')}${view.duration}`);
  const images = view.templates.flatMap((template) =>
    template.images.map((image) => `${image} (${template.name})`),
  );
  images.forEach((image, index) => lines.push(`${index === 0 ? label('Images') : ' '.repeat(17)}${image}`));
  return lines;
}

function deadlineInfo(deadline: string, now: Date): string {
  const at = Date.parse(deadline);
  if (Number.isNaN(at)) return '';
  return at <= now.getTime() ? 'delay:passed' : `delay:${formatAge(at - now.getTime())}`;
}

interface Row {
  prefix: string;
  icon: string;
  name: string;
  kind: string;
  health: NodeHealth;
  status: string;
  age: string;
  info: string;
  ready?: string;
  createdAt?: string;
}

function treeRows(view: ExperimentView, style: TextStyle): Row[] {
  const rows: Row[] = [
    {
      prefix: '',
      icon: 'Σ',
      name: view.name,
      kind: 'Experiment',
      health: view.health,
      status: view.status,
      age: ageOf(view.createdAt, style.now),
      info: '',
      ...(view.createdAt !== undefined && { createdAt: view.createdAt }),
    },
  ];
  const children = view.templates.length + view.analyses.length;
  let index = 0;
  const branch = (): string => (++index === children ? '└──' : '├──');
  for (const template of view.templates) {
    const info = [
      `template:${template.name}`,
      `available:${template.available}/${template.replicas}`,
      template.scaleDownDeadline === undefined ? '' : deadlineInfo(template.scaleDownDeadline, style.now),
      template.message ?? '',
    ].filter((part) => part !== '');
    rows.push({
      prefix: branch(),
      icon: '⧉',
      // Before the reconciler made it, the template has no ReplicaSet to name.
      name: template.replicaSet ?? `(${template.name}: no ReplicaSet yet)`,
      kind: 'ReplicaSet',
      health: template.health,
      status: template.status,
      age: ageOf(template.createdAt, style.now),
      info: info.join(','),
      ready: `${template.ready}/${template.replicas}`,
      ...(template.createdAt !== undefined && { createdAt: template.createdAt }),
    });
  }
  for (const analysis of view.analyses) {
    const info = [`analysis:${analysis.name}`, analysis.message ?? ''].filter((part) => part !== '');
    rows.push({
      prefix: branch(),
      icon: 'α',
      name: analysis.analysisRun ?? `(${analysis.name}: no AnalysisRun yet)`,
      kind: 'AnalysisRun',
      health: analysis.health,
      status: analysis.phase,
      age: '',
      info: info.join(','),
    });
  }
  return rows;
}

/** The whole `get experiment` text: header, a blank line, then the tree (templates' ReplicaSets, analyses' runs). */
export function formatExperimentView(view: ExperimentView, style: TextStyle): string {
  const cells = treeRows(view, style).map((row) => [
    { text: `${row.prefix}${row.icon} ${row.name}` },
    { text: row.kind },
    { text: `${ICON[row.health]} ${row.status}`, colour: COLOUR[row.health] },
    { text: row.age },
    ...(style.wide ? [{ text: row.ready ?? '' }, { text: row.createdAt ?? '' }] : []),
    { text: row.info },
  ]);
  const header = style.wide
    ? ['NAME', 'KIND', 'STATUS', 'AGE', 'READY', 'CREATED', 'INFO']
    : ['NAME', 'KIND', 'STATUS', 'AGE', 'INFO'];
  return `${[...headerLines(view, style), '', ...table(header, cells, style)].join('\n')}\n`;
}

/**
 * `list experiments` as a table; with `allNamespaces` the first column is NAMESPACE. GROUP follows NAME
 * when the rows come from both groups or with `-o wide`, which also adds DURATION, ROLLOUT and MESSAGE.
 */
export function formatExperimentList(
  rows: readonly ExperimentListRow[],
  allNamespaces: boolean,
  style: TextStyle,
): string {
  const header = ['NAME', 'STATUS', 'TEMPLATES', 'ANALYSES', 'AGE'];
  const cells = rows.map((row) => [
    { text: row.name },
    { text: `${ICON[row.health]} ${row.status}`, colour: COLOUR[row.health] },
    { text: String(row.templates) },
    { text: `${row.analysesSuccessful}/${row.analyses}` },
    { text: ageOf(row.createdAt, style.now) },
  ]);
  if (style.wide) {
    header.push('DURATION', 'ROLLOUT', 'MESSAGE');
    cells.forEach((cell, index) => {
      const row = rows[index];
      cell.push({ text: row?.duration ?? '' }, { text: row?.rollout ?? '' }, { text: row?.message ?? '' });
    });
  }
  if (style.wide || new Set(rows.map((row) => row.group)).size > 1) {
    header.splice(1, 0, 'GROUP');
    cells.forEach((cell, index) => cell.splice(1, 0, { text: rows[index]?.group ?? '' }));
  }
  if (allNamespaces) {
    header.unshift('NAMESPACE');
    cells.forEach((cell, index) => cell.unshift({ text: rows[index]?.namespace ?? '' }));
  }
  return `${table(header, cells, style).join('\n')}\n`;
}
