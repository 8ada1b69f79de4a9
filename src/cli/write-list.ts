// How every `list` verb ends, kubectl's way: rows as JSON for `-o view-json`, "No resources found" on
// stderr (exit 0) when there are none, else the table. One place, so the wording stays kubectl's everywhere.
import type { TerminalOutput } from './terminal-output.ts';

export interface ListScope {
  allNamespaces: boolean;
  namespace: string;
}

/** Writes `rows` as the verb's output (`viewJson`: the rows themselves) and returns the exit code. */
export function writeList<Rows extends readonly unknown[]>(
  output: TerminalOutput,
  rows: Rows,
  scope: ListScope,
  options: { viewJson: boolean; table: (rows: Rows) => string },
): number {
  if (options.viewJson) {
    output.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    output.stderr.write(
      scope.allNamespaces ? 'No resources found.\n' : `No resources found in ${scope.namespace} namespace.\n`,
    );
    return 0;
  }
  output.stdout.write(options.table(rows));
  return 0;
}
