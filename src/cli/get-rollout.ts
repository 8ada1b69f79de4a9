// `rollgate get rollout` and `rollgate list rollouts`: read (or watch) the cluster, print the tree or the table.
import type { KubeClients } from '../kube/client.ts';
import type { RolloutKey } from '../reconciler/observed-state-reader.ts';
import { readRolloutTree, readRolloutTreeAndSelector } from '../views/read-rollout-tree.ts';
import { findRollout, RolloutNotFoundError } from '../views/rollout-commands.ts';
import { BOTH_APIS, listRolloutsIn } from '../views/rollout-list.ts';
import {
  completion,
  rolloutListRow,
  rolloutListWideFacts,
  type RolloutListRow,
  type RolloutListWideFacts,
  type RolloutTree,
} from '../views/rollout-tree.ts';
import { watchPathIn, watchWithRestart, type RunningWatch } from '../kube/watch-with-restart.ts';
import { ROLLOUT_NAME_LABEL } from '../rollout/index.ts';
import { drivenPath, type DrivenApi, type DrivenGroup } from '../manifest/driven-api.ts';
import { rolloutSchema, type Rollout } from '../manifest/rollout.ts';
import { formatRolloutList, formatRolloutTree } from '../views/rollout-tree-text.ts';
import { ObservedStateReader } from '../reconciler/observed-state-reader.ts';
import { isObjectFormat, type ViewOutputFormat } from './output-format.ts';
import { formatObject, formatObjectList, type ApiObject } from './print-objects.ts';
import type { TerminalOutput } from './terminal-output.ts';

/** Where the command writes, whether it draws for a terminal, and its clock (tests pass their own). */
export type GetOutput = TerminalOutput;

export interface GetRolloutOptions {
  output: ViewOutputFormat;
  /** With -o json|yaml: keep metadata.managedFields. */
  showManagedFields?: boolean;
  watch?: boolean;
  untilComplete?: boolean;
  /** Ends a watch (Ctrl-C in the CLI); the command then exits 0. */
  signal?: AbortSignal;
  /** The Rollout's group (`--group`); unset, whichever of rollgate.dev and argoproj.io has it. */
  group?: DrivenGroup;
}

/** What one draw shows: the tree, and the Rollout as read when an object format prints it. */
interface Shown {
  tree: RolloutTree;
  object?: ApiObject | undefined;
}

function render(shown: Shown, options: GetRolloutOptions, output: GetOutput): string {
  if (isObjectFormat(options.output))
    return shown.object === undefined
      ? ''
      : formatObject(shown.object, options.output, { showManagedFields: options.showManagedFields === true });
  return options.output === 'view-json'
    ? `${JSON.stringify(shown.tree, null, 2)}\n`
    : formatRolloutTree(shown.tree, {
        now: output.now(),
        color: output.terminal,
        wide: options.output === 'wide',
      });
}

/** Clears a terminal and puts the cursor top left, so each redraw replaces the last. */
const CLEAR_SCREEN = '\u001b[H\u001b[2J';
/** On a terminal, ages move on even when nothing else does: the last tree is drawn again this often. */
const AGE_REDRAW_MS = 1_000;

/**
 * Runs `get rollout`: prints once, or (`watch` / `untilComplete`) again on every change the watches on
 * the Rollout, its ReplicaSets, pods and AnalysisRuns report. Returns the exit code: 0, or with
 * `untilComplete` 0 when the rollout becomes Healthy and 1 when it becomes Degraded.
 */
export async function runGetRollout(
  clients: KubeClients,
  key: RolloutKey,
  options: GetRolloutOptions,
  output: GetOutput,
): Promise<number> {
  // As the verbs: found in either group, refused as ambiguous when in both without --group.
  const { api, live } = await findRollout(clients, key, options.group);
  if (isObjectFormat(options.output) && !options.watch && !options.untilComplete) {
    // The object as the API server returned it: no tree to read.
    output.stdout.write(
      formatObject(live as ApiObject, options.output, {
        showManagedFields: options.showManagedFields === true,
      }),
    );
    return 0;
  }
  const first = await readRolloutTreeAndSelector(clients, key, api);
  if (first === undefined) throw new RolloutNotFoundError(key, options.group);
  const shown: Shown = { tree: first.tree, object: live as ApiObject };
  if (!options.watch && !options.untilComplete) {
    output.stdout.write(render(shown, options, output));
    return 0;
  }
  return watchRolloutTree(clients, key, api, first.selector, shown, options, output);
}

async function watchRolloutTree(
  clients: KubeClients,
  key: RolloutKey,
  api: DrivenApi,
  selector: string,
  first: Shown,
  options: GetRolloutOptions,
  output: GetOutput,
): Promise<number> {
  const textual = options.output === 'text' || options.output === 'wide';
  const redraw = output.terminal && textual;
  const objects = isObjectFormat(options.output);
  const reader = new ObservedStateReader(clients, undefined, api);
  let shownJson = '';
  let shown: Shown | undefined;
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => {
    finish = resolve;
  });
  const show = (next: Shown): void => {
    // An object format prints the Rollout again only when the Rollout changed, as `kubectl get -w` does.
    const json = JSON.stringify(objects ? next.object : next.tree);
    if (json !== shownJson) {
      const later = shownJson !== '';
      shownJson = json;
      shown = next;
      const text = render(next, options, output);
      // Piped, each change is appended; a blank line keeps the trees apart, `---` the YAML documents.
      const separator = !later ? '' : textual ? '\n' : options.output === 'yaml' ? '---\n' : '';
      output.stdout.write(redraw ? `${CLEAR_SCREEN}${text}` : `${separator}${text}`);
    }
    if (options.untilComplete) {
      const state = completion(next.tree);
      if (state !== 'waiting') finish(state === 'healthy' ? 0 : 1);
    }
  };
  show(first);

  // Events only say that something changed: each burst is answered by one fresh read of the whole rollout,
  // so the tree is never pieced together from events that may arrive out of order.
  let reading = false;
  let again = false;
  const reread = async (): Promise<void> => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        const [tree, object] = await Promise.all([
          readRolloutTree(clients, key, api),
          objects ? reader.readRolloutObject(key) : undefined,
        ]);
        if (tree === undefined) {
          output.stderr.write(`rollgate: rollout ${key.namespace}/${key.name} was deleted\n`);
          finish(1);
          return;
        }
        show({ tree, object: object as ApiObject | undefined });
      } while (again);
    } catch (err) {
      output.stderr.write(
        `rollgate: reading ${key.namespace}/${key.name} failed: ${(err as Error).message}\n`,
      );
    } finally {
      reading = false;
    }
  };
  const onEvent = (): void => {
    void reread();
  };
  const ns = encodeURIComponent(key.namespace);
  // The Rollout and its runs in its own group (`/apis/<group>/v1alpha1/namespaces/<ns>/…`).
  const inGroup = (plural: 'rollouts' | 'analysisRuns'): string =>
    watchPathIn(drivenPath(api, plural), key.namespace);
  const targets: Array<{ path: string; query: Record<string, string> }> = [
    { path: inGroup('rollouts'), query: { fieldSelector: `metadata.name=${key.name}` } },
    { path: `/apis/apps/v1/namespaces/${ns}/replicasets`, query: { labelSelector: selector } },
    { path: `/api/v1/namespaces/${ns}/pods`, query: { labelSelector: selector } },
    { path: inGroup('analysisRuns'), query: { labelSelector: `${ROLLOUT_NAME_LABEL}=${key.name}` } },
  ];
  const watches: RunningWatch[] = [];
  const onAbort = (): void => finish(0);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) finish(0);
  const ticker = redraw
    ? setInterval(() => {
        if (shown !== undefined) output.stdout.write(`${CLEAR_SCREEN}${render(shown, options, output)}`);
      }, AGE_REDRAW_MS)
    : undefined;
  try {
    for (const target of targets) {
      watches.push(
        await watchWithRestart({
          kubeConfig: clients.kubeConfig,
          path: target.path,
          query: target.query,
          onEvent,
          // A watch that keeps failing (RBAC, an API server away) would otherwise leave a silent, stale tree.
          onEnded: (err, restart) => {
            if (err === undefined || err === null) return;
            const message = err instanceof Error ? err.message : String(err);
            output.stderr.write(
              `rollgate: watch of ${target.path} ended (${message}); reopening in ${Math.round(restart.delayMs / 1000)}s\n`,
            );
          },
          // Events missed while the watch was down are caught up by a fresh read.
          onRestarted: onEvent,
        }),
      );
    }
    // Anything that changed between the first read and the watches starting.
    onEvent();
    return await done;
  } finally {
    clearInterval(ticker);
    options.signal?.removeEventListener('abort', onAbort);
    for (const watch of watches) watch.stop();
  }
}

/** One cluster `list rollouts --all-clusters` reads: its clients and namespace, or why it cannot be read. */
export interface ListedCluster {
  name: string;
  clients?: KubeClients | undefined;
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
  output: GetOutput,
): Promise<number> {
  let code = 0;
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
    for (const rollout of validRollouts(result.items ?? [], output))
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
function validRollouts(items: readonly unknown[], output: GetOutput): Rollout[] {
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
  clients: KubeClients,
  namespace: string,
  allNamespaces: boolean,
  options: { output: ViewOutputFormat; showManagedFields?: boolean },
  output: GetOutput,
): Promise<number> {
  const items = await listRolloutsIn<unknown>(clients, allNamespaces ? '' : namespace, BOTH_APIS);
  if (isObjectFormat(options.output)) {
    // The objects as the API server returned them, valid or not, in the table's order.
    const objects = (items as ApiObject[]).sort((a, b) => listOrder(listKey(a), listKey(b)));
    output.stdout.write(
      formatObjectList(objects, options.output, { showManagedFields: options.showManagedFields === true }),
    );
    return 0;
  }
  // One invalid object must not hide the others: say which, and list the rest.
  const rollouts = validRollouts(items, output);
  const rows = rollouts
    .map((rollout) => ({
      ...rolloutListRow(rollout),
      ...(options.output === 'wide' ? rolloutListWideFacts(rollout) : {}),
    }))
    .sort(listOrder);
  if (options.output === 'view-json') {
    output.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    output.stderr.write(
      allNamespaces ? 'No resources found.\n' : `No resources found in ${namespace} namespace.\n`,
    );
    return 0;
  }
  output.stdout.write(
    formatRolloutList(rows, allNamespaces, {
      now: output.now(),
      color: output.terminal,
      wide: options.output === 'wide',
    }),
  );
  return 0;
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
