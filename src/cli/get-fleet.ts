// `rollgate get fleet NAME` and `rollgate list fleets`: a Fleet's waves, clusters and where it stopped.
import type { KubeClients } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import { ROLLGATE_API_GROUP } from '../manifest/api-version.ts';
import { FLEET_KIND, FLEET_PLURAL } from '../manifest/fleet.ts';
import { fleetReadOf, listFleets, type FleetRead } from '../fleet/fleet-reads.ts';
import { isObjectFormat, type ViewOutputFormat } from './output-format.ts';
import { formatObject, formatObjectList, type ApiObject } from './print-objects.ts';
import type { TerminalOutput } from './terminal-output.ts';
import { writeList } from './write-list.ts';

const short = (revision: string | undefined): string => (revision ?? '').slice(0, 7) || '-';

/** Columns padded to their widest cell, two spaces apart. */
function table(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
    .join('\n');
}

/** A Fleet as `rollgate get fleet` prints it. */
export function formatFleet(fleet: FleetRead): string {
  const status = fleet.status;
  const lines = [
    `Name:        ${fleet.name}`,
    `Namespace:   ${fleet.namespace}`,
    `Rollout:     ${fleet.spec.rollout?.path ?? '-'}${fleet.spec.rollout?.name ? ` (${fleet.spec.rollout.name})` : ''}`,
    `Phase:       ${status?.phase ?? 'Unknown (not looked at yet)'}`,
    `Revision:    ${short(status?.revision)} (stable ${short(status?.stableRevision)})`,
    `Message:     ${status?.message ?? '-'}`,
  ];
  if (status?.stoppedBy !== undefined)
    lines.push(
      `Stopped by:  ${status.stoppedBy.cluster}${status.stoppedBy.step ? ` at step ${status.stoppedBy.step}` : ''} on ${short(status.stoppedBy.revision)}: ${status.stoppedBy.reason}`,
    );
  const out = [lines.join('\n')];
  if (status !== undefined && status.waves.length > 0)
    out.push(
      table([
        ['WAVE', 'PHASE', 'CLUSTERS'],
        ...status.waves.map((w, i) => [
          `${i === status.currentWave ? '▶ ' : '  '}${w.name}`,
          w.phase,
          w.clusters.join(', ') || '-',
        ]),
      ]),
    );
  if (status !== undefined && status.clusters.length > 0)
    out.push(
      table([
        ['CLUSTER', 'WAVE', 'PHASE', 'REVISION', 'RELEASED', 'STEP', 'MESSAGE'],
        ...status.clusters.map((c) => [
          c.name,
          status.waves[c.wave]?.name ?? String(c.wave),
          c.phase,
          short(c.revision),
          short(c.released),
          c.step ?? '-',
          c.message ?? '',
        ]),
      ]),
    );
  return `${out.join('\n\n')}\n`;
}

/** Fleets as `rollgate list fleets` prints them. */
export function formatFleetList(fleets: readonly FleetRead[], allNamespaces: boolean): string {
  const rows = fleets.map((f) => [
    ...(allNamespaces ? [f.namespace] : []),
    f.name,
    f.status?.phase ?? '-',
    f.status?.currentWave === undefined ? '-' : (f.status.waves[f.status.currentWave]?.name ?? '-'),
    short(f.status?.revision),
    f.status?.message ?? '',
  ]);
  return `${table([[...(allNamespaces ? ['NAMESPACE'] : []), 'NAME', 'PHASE', 'WAVE', 'REVISION', 'MESSAGE'], ...rows])}\n`;
}

async function getFleetObject(clients: KubeClients, namespace: string, name: string): Promise<unknown> {
  return kubeCall({ verb: 'get', kind: FLEET_KIND, namespace, name }, () =>
    clients.custom.getNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace,
      plural: FLEET_PLURAL,
      name,
    }),
  );
}

export async function runGetFleet(
  clients: KubeClients,
  ref: { namespace: string; name: string },
  options: { output: ViewOutputFormat },
  output: TerminalOutput,
): Promise<number> {
  let object: unknown;
  try {
    object = await getFleetObject(clients, ref.namespace, ref.name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    output.stderr.write(`rollgate: fleet ${ref.namespace}/${ref.name} not found\n`);
    return 1;
  }
  if (isObjectFormat(options.output)) output.stdout.write(formatObject(object as ApiObject, options.output));
  else if (options.output === 'view-json')
    output.stdout.write(`${JSON.stringify(fleetReadOf(object), null, 2)}\n`);
  else output.stdout.write(formatFleet(fleetReadOf(object)));
  return 0;
}

export async function runListFleets(
  clients: KubeClients,
  namespace: string,
  allNamespaces: boolean,
  options: { output: ViewOutputFormat },
  output: TerminalOutput,
): Promise<number> {
  const fleets = (await listFleets(clients, allNamespaces ? undefined : namespace)).sort(
    (a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
  );
  if (isObjectFormat(options.output)) {
    const objects = fleets.map(
      (f): ApiObject =>
        ({
          apiVersion: 'rollgate.dev/v1alpha1',
          kind: FLEET_KIND,
          metadata: { name: f.name, namespace: f.namespace, annotations: f.annotations },
          spec: f.spec,
          ...(f.status ? { status: f.status } : {}),
        }) as unknown as ApiObject,
    );
    output.stdout.write(formatObjectList(objects, options.output));
    return 0;
  }
  return writeList(
    output,
    fleets,
    { allNamespaces, namespace },
    {
      viewJson: options.output === 'view-json',
      table: (shown) => formatFleetList(shown, allNamespaces),
    },
  );
}
