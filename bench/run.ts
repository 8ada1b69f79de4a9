// Runs every bench/*.bench.ts (or those named on the command line) and records the results in
// docs/BENCHMARKS.md with the date and the machine, so numbers are comparable over time.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  goal?: string;
  notes?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const date = new Date().toISOString().slice(0, 10);
const sections: string[] = [];
let failed = false;

for (const file of files) {
  const name = basename(file, '.bench.ts');
  process.stdout.write(`bench ${name} … `);
  try {
    const mod = (await import(pathToFileURL(join(here, file)).href)) as { run: () => Promise<BenchResult[]> };
    const results = await mod.run();
    process.stdout.write('done\n');
    const rows = results.map(
      (r) =>
        `| ${r.name} | ${Number.isInteger(r.value) ? r.value : r.value.toFixed(2)} ${r.unit} | ${r.goal ?? ''} | ${r.notes ?? ''} |`,
    );
    for (const r of results)
      console.log(`  ${r.name}: ${r.value} ${r.unit}${r.goal ? ` (goal ${r.goal})` : ''}`);
    sections.push(
      `### ${name}\n\n| measure | result | goal | notes |\n|---|---|---|---|\n${rows.join('\n')}\n`,
    );
  } catch (err) {
    failed = true;
    process.stdout.write(`failed: ${(err as Error).stack ?? String(err)}\n`);
    sections.push(`### ${name}\n\nfailed: ${(err as Error).message}\n`);
  }
}

const target = join(root, 'docs', 'BENCHMARKS.md');
const header =
  '# Benchmarks\n\nProduced by `npm run bench` (bench/*.bench.ts). Newest run first; older runs are kept below it.\n';
const previous = existsSync(target) ? readFileSync(target, 'utf8').replace(header, '') : '';
const run = `\n## ${date} — ${machine}\n\n${sections.join('\n')}`;
// Formatted as `npm run format` would (aligned tables), so the file passes `npm run format:check`.
const formatted = async (markdown: string): Promise<string> =>
  format(markdown, { ...(await resolveConfig(target)), filepath: target });
if (only.length === 0) writeFileSync(target, await formatted(`${header}${run}${previous}`));
// A partial run prints its tables instead, for a dated section written by hand with the run's context.
else console.log(`(partial run: docs/BENCHMARKS.md not rewritten)\n${await formatted(run)}`);
process.exitCode = failed ? 1 : 0;
