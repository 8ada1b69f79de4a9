// Bench (issue 37): the client's CPU per watch event in client-node's Watch (undici's fetch, a web stream,
// readline, JSON.parse), each event a chunk of its own as an API server sends them one at a time. The stream
// comes from a child process so only the client's CPU is counted here; the floor is node:http reading the same
// bytes and counting newlines, in the same run, and beside it node:http with its own line splitter and
// JSON.parse: what a watch path of Rollgate's own would cost. On 2026-12-05 the two were within 10 % of each
// other (17.4 and 17.8 µs; 15.7 and 14.1 in a run of an earlier draft) and 1.3× the floor, so client-node's
// Watch stays: most of an event's CPU is the socket read itself.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import type { BenchResult } from './run.ts';
import { median } from './stats.ts';

const EVENTS = 10_000;
const ROUNDS = 5;

/** A ReplicaSet's MODIFIED event, about the size the reconciler's watches carry. */
const EVENT_LINE = JSON.stringify({
  type: 'MODIFIED',
  object: {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: 'web-6d4f8b9c7',
      namespace: 'default',
      resourceVersion: '12345',
      labels: { app: 'web', 'rollouts-pod-template-hash': '6d4f8b9c7' },
      ownerReferences: [
        { apiVersion: 'rollgate.dev/v1alpha1', kind: 'Rollout', name: 'web', uid: 'u-1', controller: true },
      ],
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web', 'rollouts-pod-template-hash': '6d4f8b9c7' } },
      template: {
        metadata: { labels: { app: 'web', 'rollouts-pod-template-hash': '6d4f8b9c7' } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] },
      },
    },
    status: { replicas: 2, readyReplicas: 2, availableReplicas: 2, observedGeneration: 1 },
  },
});

/** The child's server: every request gets EVENTS lines, one write per event loop turn, then the end. */
const SERVER = `
const line = ${JSON.stringify(`${EVENT_LINE}\n`)};
require('node:http').createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  let sent = 0;
  const next = () => { if (sent++ < ${EVENTS}) { res.write(line); setImmediate(next); } else res.end(); };
  next();
}).listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

const cpuMs = (from: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

export async function run(): Promise<BenchResult[]> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const [port] = (await once(child.stdout, 'data')) as [Buffer];
    const base = `http://127.0.0.1:${port.toString().trim()}`;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'bench', server: base, skipTLSVerify: true }],
      users: [{ name: 'bench', token: 'bench-token' }],
      contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
      currentContext: 'bench',
    });
    const clientNode = new Watch(kubeConfig);
    let seen = 0;
    const onEvent = (): void => {
      seen += 1;
    };
    const runs: Record<string, () => Promise<void>> = {
      "client-node's Watch": () =>
        new Promise((resolve) => void clientNode.watch('/watch', {}, onEvent, () => resolve())),
      'node:http, each line parsed as JSON': () =>
        new Promise((resolve) => {
          request(`${base}/watch`, (response) => {
            response.setEncoding('utf8');
            let partial = '';
            response.on('data', (chunk: string) => {
              const text = partial + chunk;
              let start = 0;
              for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
                JSON.parse(text.slice(start, newline));
                seen += 1;
                start = newline + 1;
              }
              partial = text.slice(start);
            });
            response.on('end', resolve);
          }).end();
        }),
      'floor: node:http, newlines counted': () =>
        new Promise((resolve) => {
          request(`${base}/watch`, (response) => {
            response.on('data', (chunk: Buffer) => {
              for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) seen += 1;
            });
            response.on('end', resolve);
          }).end();
        }),
    };
    const perEvent: Record<string, number[]> = {};
    for (let round = 0; round < ROUNDS; round++)
      for (const [name, watch] of Object.entries(runs)) {
        seen = 0;
        const before = process.cpuUsage();
        await watch();
        const ms = cpuMs(before);
        if (seen !== EVENTS) throw new Error(`${name} saw ${seen} of ${EVENTS} events`);
        (perEvent[name] ??= []).push((ms * 1000) / EVENTS);
      }
    const load = loadavg()[0]!;
    const floor = median(perEvent['floor: node:http, newlines counted']!);
    return Object.entries(perEvent).map(([name, samples]) => ({
      name: `watch client CPU per event: ${name}`,
      value: Number(median(samples).toFixed(1)),
      unit: 'µs',
      notes: `median of ${ROUNDS} runs of ${EVENTS} events (one chunk each, ${EVENT_LINE.length} bytes); ${(median(samples) / floor).toFixed(2)}× the floor; load average ${load.toFixed(1)} on ${availableParallelism()} cores`,
    }));
  } finally {
    child.kill();
  }
}
