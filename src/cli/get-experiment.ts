// `rollgate get experiment` and `rollgate list experiments`: read the cluster, print the view or the table.
import type { KubeClients } from '../kube/client.ts';
import type { DrivenGroup } from '../manifest/driven-api.ts';
import {
  findExperiment,
  listExperimentsIn,
  listExperimentViews,
  readExperimentView,
  type ExperimentRef,
} from '../views/experiment-reads.ts';
import { formatExperimentList, formatExperimentView } from '../views/experiment-view-text.ts';
import { experimentListRow } from '../views/experiment-view.ts';
import { isObjectFormat, type ViewOutputFormat } from './output-format.ts';
import { formatObject, formatObjectList, type ApiObject } from './print-objects.ts';
import type { TerminalOutput } from './terminal-output.ts';
import { writeList } from './write-list.ts';

export interface ExperimentOutputOptions {
  output: ViewOutputFormat;
  /** With -o json|yaml: keep metadata.managedFields. */
  showManagedFields?: boolean;
}

/** Runs `get experiment`: the object (json, yaml, name), the view's JSON, or its text. Returns the exit code. */
export async function runGetExperiment(
  clients: KubeClients,
  ref: ExperimentRef,
  options: ExperimentOutputOptions & { group?: DrivenGroup },
  output: TerminalOutput,
): Promise<number> {
  const { live } = await findExperiment(clients, ref, options.group);
  if (isObjectFormat(options.output)) {
    output.stdout.write(
      formatObject(live as ApiObject, options.output, {
        showManagedFields: options.showManagedFields === true,
      }),
    );
    return 0;
  }
  const view = await readExperimentView(clients, ref, live);
  output.stdout.write(
    options.output === 'view-json'
      ? `${JSON.stringify(view, null, 2)}\n`
      : formatExperimentView(view, {
          now: output.now(),
          color: output.terminal,
          wide: options.output === 'wide',
        }),
  );
  return 0;
}

function listOrder(a: ApiObject, b: ApiObject): number {
  const key = (object: ApiObject): [string, string, string] => {
    const metadata = object.metadata as { namespace?: string; name?: string } | undefined;
    return [metadata?.namespace ?? '', metadata?.name ?? '', (object.apiVersion ?? '').split('/')[0] ?? ''];
  };
  const [left, right] = [key(a), key(b)];
  return (
    left[0].localeCompare(right[0]) || left[1].localeCompare(right[1]) || left[2].localeCompare(right[2])
  );
}

/** Runs `list experiments` in one namespace, or in all with `allNamespaces`, of both groups. */
export async function runListExperiments(
  clients: KubeClients,
  namespace: string,
  allNamespaces: boolean,
  options: ExperimentOutputOptions,
  output: TerminalOutput,
): Promise<number> {
  const scope = allNamespaces ? '' : namespace;
  if (isObjectFormat(options.output)) {
    // The objects as the API server returned them, valid or not, in the table's order.
    const objects = ((await listExperimentsIn(clients, scope)) as ApiObject[]).sort(listOrder);
    output.stdout.write(
      formatObjectList(objects, options.output, { showManagedFields: options.showManagedFields === true }),
    );
    return 0;
  }
  const { views, skipped } = await listExperimentViews(clients, scope);
  // One invalid object must not hide the others: say which, and list the rest.
  for (const ref of skipped)
    output.stderr.write(`rollgate: skipped invalid experiment ${ref.namespace}/${ref.name}\n`);
  const rows = views.map(experimentListRow);
  return writeList(
    output,
    rows,
    { allNamespaces, namespace },
    {
      viewJson: options.output === 'view-json',
      table: (shown) =>
        formatExperimentList(shown, allNamespaces, {
          now: output.now(),
          color: output.terminal,
          wide: options.output === 'wide',
        }),
    },
  );
}
