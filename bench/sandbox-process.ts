// A sandbox cluster in a child process, so a bench can read its CPU time apart from Rollgate's, and count
// the HTTP requests it answers (every request, reads and watches included, not only the audited writes).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { sandboxKubeConfig } from '../src/sandbox/sandbox-kubeconfig.ts';

export interface SandboxProcess {
  url: string;
  pid: number;
  kubeConfig: KubeConfig;
  /** HTTP requests the sandbox has received since it started. */
  requests(): Promise<number>;
  /**
   * The same, by method and request shape (`PATCH replicasets/{name}`, `GET pods ?labelSelector`, …); a
   * server-side apply (the sync's) is marked `(apply)`.
   */
  requestKinds(): Promise<Record<string, number>>;
  /** TCP connections the sandbox has accepted since it started: how well clients reuse theirs. */
  connections(): Promise<number>;
  /** Requests that write (every method but GET, HEAD and OPTIONS) since it started. */
  writes(): Promise<number>;
  /** Requests answered 409 Conflict since it started (a write planned from a stale read). */
  conflicts(): Promise<number>;
  /**
   * Requests naming one Rollout (`rollouts/NAME…`) or one of its ReplicaSets (`replicasets/NAME-HASH`)
   * since the last call (the first call starts the record and returns none), as [epoch ms, request kind, Rollout name]: what a rollout was sent after its own
   * pause is told apart from what brought it there.
   */
  namedRequests(): Promise<Array<[number, string, string]>>;
  /**
   * What changed in the Rollouts' status since the last call (the first call gives every one), read by
   * the child from its store as each change is made, so a bench follows 10,000 Rollouts without a watch
   * of its own (whose JSON was more CPU than Redis's at that size, on the same two cores): each changed
   * Rollout's status now (null: deleted), and the moments Rollouts reached a pause, with its hash.
   */
  rolloutChanges(): Promise<RolloutChanges>;
  stop(): Promise<void>;
}

export interface RolloutChanges {
  states: Array<[string, { phase?: string; currentPodHash?: string; stableRS?: string } | null]>;
  /** [name, currentPodHash, epoch ms]: the rollout was seen Paused on that hash for the first time then. */
  paused: Array<[string, string | undefined, number]>;
}

/**
 * Starts `startSandbox({ readyDelayMs })` (system clock) in a child process. With `cpuProfileDir`, the
 * child runs under `node --cpu-prof` and writes its profile there when stopped.
 */
export async function startSandboxInChild(
  options: { readyDelayMs?: number; cpuProfileDir?: string } = {},
): Promise<SandboxProcess> {
  const sandboxModule = pathToFileURL(
    fileURLToPath(new URL('../src/sandbox/index.ts', import.meta.url)),
  ).href;
  const code = [
    "import { subscribe } from 'node:diagnostics_channel';",
    "import { createInterface } from 'node:readline';",
    `const { startSandbox } = await import(${JSON.stringify(sandboxModule)});`,
    'let requests = 0;',
    'let connections = 0;',
    'let writes = 0;',
    "subscribe('net.server.socket', () => { connections += 1; });",
    'let conflicts = 0;',
    "subscribe('http.server.response.finish', ({ response }) => { if (response.statusCode === 409) conflicts += 1; });",
    'const kinds = new Map();',
    // Named requests are kept from the first `named` on (a measure's start), not through a whole run.
    'let named = [];',
    'let recordNamed = false;',
    // The Rollout a request names: rollouts/NAME, or replicasets/NAME-HASH (a ReplicaSet Rollgate made).
    "const rolloutOf = (url) => { const path = url.split('?')[0]; const m = /\\/(rollouts|replicasets)\\/([^/]+)/.exec(path); if (!m) return undefined; return m[1] === 'rollouts' ? m[2] : m[2].replace(/-[^-]+$/, ''); };",
    // Method, resource and verb shape of each request (the names stripped), for where the requests go.
    "const kindOf = (method, url) => { const [path, query = ''] = url.split('?'); const parts = path.split('/').filter(Boolean); const ns = parts.indexOf('namespaces'); const rest = ns >= 0 && parts.length > ns + 2 ? parts.slice(ns + 2) : parts.slice(parts[0] === 'api' ? 2 : 3); const shape = rest.length > 1 ? `${rest[0]}/{name}${rest[2] ? `/${rest[2]}` : ''}` : `${rest[0] ?? path}${query.includes('watch=') ? ' watch' : ''}${query.includes('labelSelector') ? ' ?labelSelector' : ''}`; return `${method} ${shape}${method === 'PATCH' && query.includes('force=true') ? ' (apply)' : ''}`; };",
    `const trace = ${JSON.stringify(process.env.ROLLGATE_BENCH_TRACE_REQUESTS === '1')};`,
    "subscribe('http.server.request.start', ({ request }) => { if (trace) process.stderr.write(`request ${Date.now()} ${request.method} ${request.url}\\n`); requests += 1; if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method)) writes += 1; const kind = kindOf(request.method, request.url ?? ''); kinds.set(kind, (kinds.get(kind) ?? 0) + 1); const rollout = rolloutOf(request.url ?? ''); if (recordNamed && rollout !== undefined) named.push([Date.now(), kind, rollout]); });",
    `const sandbox = await startSandbox({ readyDelayMs: ${options.readyDelayMs ?? 1000} });`,
    // Rollout status changes, as the store makes them (see rolloutChanges).
    'let changedStates = new Map();',
    'let newPauses = [];',
    'const pausedHash = new Map();',
    "sandbox.subscribe(({ type, object }) => { const name = object.metadata.name ?? ''; if (type === 'DELETED') { changedStates.set(name, null); pausedHash.delete(name); return; } const status = object.status ?? {}; changedStates.set(name, { phase: status.phase, currentPodHash: status.currentPodHash, stableRS: status.stableRS }); if (status.phase === 'Paused' && (!pausedHash.has(name) || pausedHash.get(name) !== status.currentPodHash)) { pausedHash.set(name, status.currentPodHash); newPauses.push([name, status.currentPodHash, Date.now()]); } }, 'rollgate.dev/Rollout');",
    'console.log(sandbox.url);',
    'const stop = () => sandbox.stop().then(() => process.exit(0));',
    "process.on('SIGTERM', stop);",
    "createInterface({ input: process.stdin }).on('line', (line) => {",
    "  if (line === 'requests') console.log(String(requests));",
    "  if (line === 'connections') console.log(String(connections));",
    "  if (line === 'writes') console.log(String(writes));",
    "  if (line === 'conflicts') console.log(String(conflicts));",
    "  if (line === 'kinds') console.log(JSON.stringify(Object.fromEntries(kinds)));",
    "  if (line === 'named') { console.log(JSON.stringify(named)); named = []; recordNamed = true; }",
    "  if (line === 'rollouts') { console.log(JSON.stringify({ states: [...changedStates], paused: newPauses })); changedStates = new Map(); newPauses = []; }",
    "  if (line === 'stop') void stop();",
    '});',
  ].join('\n');
  const profile = options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const [url] = (await once(lines, 'line')) as [string];
  const answers: Array<(line: string) => void> = [];
  lines.on('line', (line) => answers.shift()?.(line));
  return {
    url: url.trim(),
    pid: child.pid ?? 0,
    kubeConfig: sandboxKubeConfig(url.trim()),
    requests: () =>
      new Promise<number>((resolve) => {
        answers.push((line) => resolve(Number(line)));
        child.stdin.write('requests\n');
      }),
    connections: () =>
      new Promise<number>((resolve) => {
        answers.push((line) => resolve(Number(line)));
        child.stdin.write('connections\n');
      }),
    writes: () =>
      new Promise<number>((resolve) => {
        answers.push((line) => resolve(Number(line)));
        child.stdin.write('writes\n');
      }),
    conflicts: () =>
      new Promise<number>((resolve) => {
        answers.push((line) => resolve(Number(line)));
        child.stdin.write('conflicts\n');
      }),
    requestKinds: () =>
      new Promise<Record<string, number>>((resolve) => {
        answers.push((line) => resolve(JSON.parse(line) as Record<string, number>));
        child.stdin.write('kinds\n');
      }),
    namedRequests: () =>
      new Promise<Array<[number, string, string]>>((resolve) => {
        answers.push((line) => resolve(JSON.parse(line) as Array<[number, string, string]>));
        child.stdin.write('named\n');
      }),
    rolloutChanges: () =>
      new Promise<RolloutChanges>((resolve) => {
        answers.push((line) => resolve(JSON.parse(line) as RolloutChanges));
        child.stdin.write('rollouts\n');
      }),
    stop: async () => {
      const exited = once(child, 'exit');
      // A line on stdin rather than a signal: --cpu-prof writes its profile only on a normal exit.
      child.stdin.write('stop\n');
      await exited;
    },
  };
}
