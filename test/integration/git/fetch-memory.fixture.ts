// Child process of fetch-memory.test.ts: fetches one source and reports the outcome and its peak RSS.
// Run apart from the test runner so the RSS measured is the fetch's alone.
import { GitSource } from '../../../src/git/source.ts';

const [url, cacheDir] = process.argv.slice(2);
if (url === undefined || cacheDir === undefined) throw new Error('usage: <repository url> <cache dir>');
const source = new GitSource({ name: 'bomb', url, branch: 'main', path: '.' }, { cacheDir });
const baselineRssBytes = process.memoryUsage.rss();
let outcome: Record<string, unknown>;
try {
  const head = await source.fetch();
  const files = await source.readManifestFiles(head);
  outcome = { ok: true, head, files: files.length };
} catch (error) {
  const { name, code, message } = error as { name?: string; code?: string; message?: string };
  outcome = { ok: false, name, code, message };
}
// maxRSS is in KiB: the process's peak, whatever freed memory since.
const peakRssBytes = process.resourceUsage().maxRSS * 1024;
process.stdout.write(`${JSON.stringify({ ...outcome, baselineRssBytes, peakRssBytes })}\n`);
