// Every Rollout / AnalysisTemplate / ClusterAnalysisTemplate / Experiment in Argo Rollouts' examples, read in place:
// canary Rollouts validate clean; what Rollgate does not support is reported with the exact message and line.
import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { validateManifests } from '../../../src/manifest/validate.ts';
import { parseManifests } from '../../../src/manifest/manifest.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';

const corpus = upstreamCorpus('argo-rollouts/examples', import.meta.filename);
const examples = corpus.folder;

function yamlFiles(directory: string): string[] {
  return readdirSync(directory)
    .sort()
    .flatMap((entry) => {
      const full = join(directory, entry);
      if (statSync(full).isDirectory()) return yamlFiles(full);
      return /\.ya?ml$/.test(entry) ? [relative(examples, full)] : [];
    });
}

const read = (file: string) => ({ file, text: readFileSync(join(examples, file), 'utf8') });

// Argo's examples are independent of each other (several reuse names), so each file is validated on
// its own, next to the shared template files its Rollouts reference.
const SHARED_TEMPLATES = ['analysis-templates.yaml', 'cluster-analysis-templates.yaml'];

/** For each file: every Rollout/template in it, and the exact errors expected (none = clean). */
const EXPECTED: Record<string, Record<string, string[]>> = {
  'analysis-templates.yaml': { 'AnalysisTemplate/pass': [], 'AnalysisTemplate/random-fail': [] },
  'cluster-analysis-templates.yaml': { 'ClusterAnalysisTemplate/always-pass': [] },
  // The Experiment kind is validated; its analyses name the shared templates.
  'experiment-with-analysis.yaml': { 'Experiment/experiment-with-analysis': [] },
  'rollout-canary.yaml': { 'Rollout/rollout-canary': [] },
  'notifications/rollout-canary.yaml': { 'Rollout/rollout-canary': [] },
  'rollout-analysis-step.yaml': { 'Rollout/rollout-analysis-step': [] },
  'rollout-background-analysis.yaml': { 'Rollout/rollout-background-analysis': [] },
  'rollout-rolling-update.yaml': { 'Rollout/rollout-rollingupdate': [] },
  'rollout-secret.yaml': { 'Rollout/rollout-secret': [], 'AnalysisTemplate/analysis-secret': [] },
  'traffic-management/job.yaml': { 'AnalysisTemplate/load-test': [] },
  'traffic-management/rollout-linkerd.yaml': {
    // SMI is driven: the Linkerd example validates clean.
    'Rollout/rollout-linkerd': [],
    'AnalysisTemplate/load-test': [],
  },
  'ambassador/rollout.yaml': {
    // Ambassador is driven: the example validates clean.
    'Rollout/echo-rollout': [],
  },
  'apisix/rollout.yaml': {
    // APISIX is driven, its header route too, beside setCanaryScale in the same step as Argo allows.
    'Rollout/rollout-apisix-canary': [],
  },
  'appmesh/canary-rollout.yaml': {
    // App Mesh is driven: the example validates clean.
    'AnalysisTemplate/success-rate': [],
    'Rollout/my-rollout': [],
  },
  'istio/istio-mirror.yaml': {
    'Rollout/istio-host-split': [],
  },
  'istio/istio-subset-split.yaml': {
    // Istio with DestinationRule subsets is driven: the example validates clean.
    'Rollout/istio-subset-split': [],
  },
  // Experiment steps are run: these validate clean.
  'rollout-baseline-vs-canary.yaml': { 'Rollout/rollout-baseline-vs-canary': [] },
  'rollout-canary-preview.yaml': { 'Rollout/rollout-canary-preview': [] },
  'rollout-experiment-step.yaml': { 'Rollout/rollout-experiment-step': [] },
  'rollout-bluegreen.yaml': {
    'Rollout/rollout-bluegreen': [],
  },
  // workloadRef is driven: the template (and the selector, absent here) are read from the Deployment.
  'rollout-template-ref.yaml': {
    'Rollout/rollout-ref-deployment': [],
  },
  'workload-ref/workload-ref.yaml': {
    'Rollout/rollout-ref-deployment': [],
  },
  // Weighted experiment templates are routed (Istio, SMI, ALB): these validate clean.
  'traffic-routing-experiment-step/istio-host-split-experiment-step.yaml': { 'Rollout/istio-host-split': [] },
  'traffic-routing-experiment-step/rollout-alb-experiment-step.yaml': { 'Rollout/alb-rollout': [] },
  'traffic-routing-experiment-step/rollout-smi-experiment-step.yaml': {
    'Rollout/rollout-smi-experiment': [],
  },
};

describe.skipIf(corpus.missing)('Argo Rollouts examples (read in place)', () => {
  const files = corpus.missing ? [] : yamlFiles(examples);

  it('the table covers every Rollout, AnalysisTemplate, ClusterAnalysisTemplate and Experiment in the corpus', () => {
    const found = files
      .filter((file) =>
        parseManifests(read(file).text, file).objects.some((o) =>
          ['Rollout', 'AnalysisTemplate', 'ClusterAnalysisTemplate', 'Experiment'].includes(o.kind),
        ),
      )
      .sort();
    expect(found).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED))('%s', (file) => {
    const context = SHARED_TEMPLATES.filter((shared) => shared !== file).map(read);
    const report = validateManifests([read(file), ...context]);
    const mine = report.objects.filter((o) => o.file === file);
    const actual = Object.fromEntries(
      mine.map((o) => [
        `${o.kind}/${o.name}`,
        o.errors.map((e) => `${e.line}:${e.col} ${e.path}: ${e.message}`).sort(),
      ]),
    );
    expect(actual).toEqual(EXPECTED[file]);
    for (const object of mine) {
      expect(object.warnings).toEqual([]);
      expect(object.valid).toBe((EXPECTED[file]?.[`${object.kind}/${object.name}`] ?? []).length === 0);
    }
  });

  it('validating the whole folder reports the names reused across examples as duplicates', () => {
    const report = validateManifests(files.map(read));
    const duplicates = report.objects.flatMap((o) =>
      o.errors
        .filter((e) => e.message.startsWith('duplicate'))
        .map((e) => `${o.file}:${e.line}: ${e.message}`),
    );
    expect(duplicates).toEqual([
      'rollout-canary.yaml:7: duplicate Rollout "rollout-canary": first defined at notifications/rollout-canary.yaml:37',
      'traffic-management/rollout-linkerd.yaml:85: duplicate AnalysisTemplate "load-test": first defined at traffic-management/job.yaml:1',
      'traffic-routing-experiment-step/istio-host-split-experiment-step.yaml:50: duplicate Rollout "istio-host-split": first defined at istio/istio-mirror.yaml:51',
      'workload-ref/workload-ref.yaml:26: duplicate Rollout "rollout-ref-deployment": first defined at rollout-template-ref.yaml:24',
    ]);
    // Experiments are validated like the other Argo kinds, never skipped.
    expect(report.skipped.find((s) => s.kind === 'Experiment')).toBeUndefined();
  });
});
