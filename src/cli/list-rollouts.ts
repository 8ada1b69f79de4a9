// `rollgate list rollouts`: the Rollouts of a namespace (or all, or of every registered cluster) as a table.
// Apart from get-rollout.ts, whose tree reads load client-node: a list needs only the custom-object reads.
import { BOTH_APIS, listRolloutsIn, type RolloutListClients } from '../views/rollout-list.ts';
import {
  rolloutListRow,
  rolloutListWideFacts,
  type RolloutListRow,
  type RolloutListWideFacts,
} from '../views/rollout-tree.ts';
import type { Rollout } from '../manifest/rollout.ts';
import type * as RolloutModule from '../manifest/rollout.ts';
import { formatRolloutList } from '../views/rollout-tree-text.ts';
import { isObjectFormat, type ViewOutputFormat } from './output-format.ts';
import { formatObjectList, type ApiObject } from './print-objects.ts';
import type { TerminalOutput } from './terminal-output.ts';
import { writeList } from './write-list.ts';

/**
 * The Rollout schema's module (and zod), loaded while the lists are out: a third of the command's
 * start-up otherwise spent before its first request.
 */
function loadRolloutSchema(): Promise<typeof RolloutModule> {
  const loading = import('../manifest/rollout.ts');
  // Awaited once the lists are in; a failed list must not leave it unhandled.
  loading.catch(() => undefined);
  return loading;
}

/** One cluster `list rollouts --all-clusters` reads: its clients and namespace, or why it cannot be read. */
export interface ListedCluster {
  name: string;
  clients?: RolloutListClients | undefined;
  namespace?: string | undefined;
  problem?: string | undefined;
}

/**
 * Runs `list rollouts --all-clusters`: every cluster's Rollouts in one table with a CLUSTER column, the
 * clusters read at once. A cluster that cannot be read (Invalid, unreachable, refused) is said on stderr
 * and makes the exit code 1; the others are listed all the same.
 */
export async function runListRolloutsAcrossClusters(
  clusters: readonly ListedCluster[],
  namespace: string | undefined,
  allNamespaces: boolean,
  options: { output: ViewOutputFormat },
  output: TerminalOutput,
): Promise<number> {
  let code = 0;
  const schema = loadRolloutSchema();
  const read = await Promise.all(
    clusters.map(async (cluster) => {
      if (cluster.clients === undefined) return { cluster, error: cluster.problem ?? 'no connection' };
      try {
        const ns = allNamespaces ? '' : (namespace ?? cluster.namespace ?? 'default');
        return { cluster, items: await listRolloutsIn<unknown>(cluster.clients, ns, BOTH_APIS) };
      } catch (err) {
        return { cluster, error: (err as Error).message };
      }
    }),
  );
  const rows: Array<RolloutListRow & Partial<RolloutListWideFacts> & { cluster: string }> = [];
  for (const result of read) {
    if (result.error !== undefined) {
      output.stderr.write(`rollgate: cluster ${result.cluster.name}: ${result.error}\n`);
      code = 1;
      continue;
    }
    for (const rollout of validRollouts(await schema, result.items ?? [], output))
      rows.push({
        cluster: result.cluster.name,
        ...rolloutListRow(rollout),
        ...(options.output === 'wide' ? rolloutListWideFacts(rollout) : {}),
      });
  }
  rows.sort((a, b) => a.cluster.localeCompare(b.cluster) || listOrder(a, b));
  if (options.output === 'view-json') {
    output.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return code;
  }
  if (rows.length === 0) {
    output.stderr.write('No resources found.\n');
    return code;
  }
  output.stdout.write(
    formatRolloutList(rows, allNamespaces, {
      now: output.now(),
      color: output.terminal,
      wide: options.output === 'wide',
    }),
  );
  return code;
}

/** The items that parse as Rollouts; each one that does not is named on stderr, and the rest listed. */
function validRollouts(
  { rolloutSchema }: typeof RolloutModule,
  items: readonly unknown[],
  output: TerminalOutput,
): Rollout[] {
  const rollouts: Rollout[] = [];
  for (const item of items) {
    const parsed = rolloutSchema.safeParse(item);
    if (parsed.success) rollouts.push(parsed.data as Rollout);
    else {
      const meta = (item as { metadata?: { namespace?: string; name?: string } }).metadata;
      output.stderr.write(
        `rollgate: skipped invalid rollout ${meta?.namespace ?? '?'}/${meta?.name ?? '?'}\n`,
      );
    }
  }
  return rollouts;
}

/**
 * Runs `list rollouts` in one namespace, or in all with `allNamespaces`: the Rollouts of both groups
 * (rollgate.dev and argoproj.io), as the verbs find a Rollout in either.
 */
export async function runListRollouts(
  clients: RolloutListClients,
  namespace: string,
  allNamespaces: boolean,
  options: { output: ViewOutputFormat; showManagedFields?: boolean },
  output: TerminalOutput,
): Promise<number> {
  const listing = listRolloutsIn<unknown>(clients, allNamespaces ? '' : namespace, BOTH_APIS);
  if (isObjectFormat(options.output)) {
    const items = await listing;
    // The objects as the API server returned them, valid or not, in the table's order.
    const objects = (items as ApiObject[]).sort((a, b) => listOrder(listKey(a), listKey(b)));
    output.stdout.write(
      formatObjectList(objects, options.output, { showManagedFields: options.showManagedFields === true }),
    );
    return 0;
  }
  const schema = loadRolloutSchema();
  const items = await listing;
  // One invalid object must not hide the others: say which, and list the rest.
  const rollouts = validRollouts(await schema, items, output);
  const rows = rollouts
    .map((rollout) => ({
      ...rolloutListRow(rollout),
      ...(options.output === 'wide' ? rolloutListWideFacts(rollout) : {}),
    }))
    .sort(listOrder);
  return writeList(
    output,
    rows,
    { allNamespaces, namespace },
    {
      viewJson: options.output === 'view-json',
      table: (shown) =>
        formatRolloutList(shown, allNamespaces, {
          now: output.now(),
          color: output.terminal,
          wide: options.output === 'wide',
        }),
    },
  );
}

/** Where a Rollout stands in a list: by namespace, name, then group (a name may be in both groups). */
interface ListKey {
  namespace: string;
  name: string;
  group: string;
}

function listOrder(a: ListKey, b: ListKey): number {
  return (
    a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name) || a.group.localeCompare(b.group)
  );
}

function listKey(object: ApiObject): ListKey {
  const metadata = object.metadata as { namespace?: string; name?: string } | undefined;
  return {
    namespace: metadata?.namespace ?? '',
    name: metadata?.name ?? '',
    group: (object.apiVersion ?? '').split('/')[0] ?? '',
  };
}
