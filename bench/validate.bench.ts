// Bench: validating 1,000 manifests (Rollouts + AnalysisTemplates) from YAML text, as `rollgate validate` does.
import { availableParallelism, loadavg } from 'node:os';
import { parseManifests } from '../src/manifest/manifest.ts';
import { validateManifests } from '../src/manifest/validate.ts';
import type { BenchResult } from './run.ts';
import { median } from './stats.ts';

function rollout(i: number): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: app-${i}
  namespace: team-${i % 10}
spec:
  replicas: ${1 + (i % 5)}
  selector:
    matchLabels: {app: app-${i}}
  template:
    metadata:
      labels: {app: app-${i}, tier: web}
    spec:
      containers:
        - name: app
          image: registry.example/app:${i}
          ports: [{containerPort: 8080}]
          resources:
            requests: {cpu: 100m, memory: 128Mi}
            limits: {cpu: "1", memory: 256Mi}
  strategy:
    canary:
      canaryService: app-${i}-canary
      stableService: app-${i}-stable
      analysis:
        templates: [{templateName: success-rate-${i % 10}}]
        startingStep: 1
      steps:
        - setWeight: 10
        - pause: {duration: 1m}
        - setWeight: 50
        - analysis: {templates: [{templateName: success-rate-${i % 10}}]}
        - pause: {}
`;
}

function template(n: number): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: success-rate-${n}
  namespace: team-${n}
spec:
  args: [{name: service}]
  metrics:
    - name: success
      interval: 1m
      count: 5
      failureLimit: 1
      successCondition: result[0] >= 0.95
      provider:
        prometheus:
          address: http://prometheus:9090
          query: sum(rate(http_requests_total{code!~"5.."}[1m])) / sum(rate(http_requests_total[1m]))
`;
}

/** 990 Rollouts + 10 AnalysisTemplates in 100 files of 10 documents each. */
function corpus(): Array<{ file: string; text: string }> {
  const files: Array<{ file: string; text: string }> = [];
  for (let f = 0; f < 100; f += 1) {
    const docs: string[] = [];
    for (let d = 0; d < 10; d += 1) {
      const i = f * 10 + d;
      docs.push(i < 10 ? template(i) : rollout(i));
    }
    files.push({ file: `apps/file-${f}.yaml`, text: docs.join('---\n') });
  }
  return files;
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

export async function run(): Promise<BenchResult[]> {
  const files = corpus();
  // Warm up the JIT and zod's compiled schemas once, as a long-running process would be.
  const warm = validateManifests(files);
  if (warm.summary.valid !== 1000)
    throw new Error(`bench corpus is not valid: ${JSON.stringify(warm.summary)}`);
  // Wall time suffers on a shared machine; CPU time of this process is the fairer figure, so both are kept.
  const wall: number[] = [];
  const cpu: number[] = [];
  const parseCpu: number[] = [];
  for (let round = 0; round < 5; round += 1) {
    let cpuStart = process.cpuUsage();
    for (const { file, text } of files) parseManifests(text, file);
    parseCpu.push(cpuMs(process.cpuUsage(cpuStart)));
    cpuStart = process.cpuUsage();
    const started = performance.now();
    validateManifests(files);
    wall.push(performance.now() - started);
    cpu.push(cpuMs(process.cpuUsage(cpuStart)));
  }
  const load = loadavg()[0] ?? 0;
  const bytes = files.reduce((sum, { text }) => sum + text.length, 0);
  return [
    {
      name: 'validate 1,000 manifests, CPU time',
      value: median(cpu),
      unit: 'ms',
      goal: '< 1000 ms',
      notes: `median of 5; 990 Rollouts + 10 AnalysisTemplates in 100 files (${Math.round(bytes / 1024)} KiB of YAML)`,
    },
    {
      name: 'validate 1,000 manifests, wall time',
      value: median(wall),
      unit: 'ms',
      goal: '< 1000 ms',
      notes: `median of 5; load average ${load.toFixed(1)} on ${availableParallelism()} cores while measured`,
    },
    { name: 'of which YAML parsing, CPU time', value: median(parseCpu), unit: 'ms', notes: 'median of 5' },
  ];
}
