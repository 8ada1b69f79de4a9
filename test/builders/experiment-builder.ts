// Builders for Experiment planner tests: an Experiment, and what the shell observed for it.
import type { Experiment, ExperimentStatus, ExperimentTemplate } from '../../src/manifest/experiment.ts';
import type {
  ObservedExperiment,
  ObservedExperimentRun,
  ObservedTemplateReplicaSet,
} from '../../src/experiment/index.ts';
import { templateHash, templateReplicaSetName } from '../../src/experiment/index.ts';

export function aTemplate(name: string, overrides: Partial<ExperimentTemplate> = {}): ExperimentTemplate {
  return {
    name,
    selector: { matchLabels: { app: 'demo', role: name } },
    template: {
      metadata: { labels: { app: 'demo', role: name } },
      spec: {
        containers: [{ name: 'app', image: `demo:${name}`, ports: [{ name: 'http', containerPort: 8080 }] }],
      },
    },
    ...overrides,
  };
}

export function anExperiment(spec: Partial<Experiment['spec']> = {}, status?: ExperimentStatus): Experiment {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Experiment',
    metadata: { name: 'exp', namespace: 'shop', uid: 'uid-exp' },
    spec: { templates: [aTemplate('baseline'), aTemplate('canary')], ...spec },
    ...(status !== undefined && { status }),
  };
}

/** The observed ReplicaSet of `template` with `available` pods out of `replicas`. */
export function aTemplateReplicaSet(
  experiment: Experiment,
  templateName: string,
  replicas: number,
  available: number,
  annotations: Record<string, string> = {},
): ObservedTemplateReplicaSet {
  const template = experiment.spec.templates.find((t) => t.name === templateName)!;
  const hash = templateHash(experiment.metadata.name, template);
  return {
    name: templateReplicaSetName(experiment.metadata.name, templateName, hash),
    templateName,
    resourceVersion: '7',
    podTemplateHash: hash,
    labels: { ...(template.template.metadata?.labels ?? {}), 'rollouts-pod-template-hash': hash },
    annotations,
    replicas,
    status: { replicas: available, readyReplicas: available, availableReplicas: available },
    ports: [{ name: 'http', containerPort: 8080 }],
  };
}

export function observedOf(parts: Partial<ObservedExperiment> = {}): ObservedExperiment {
  return { replicaSets: [], services: [], analysisRuns: [], analysisTemplates: {}, ...parts };
}

export function aRun(
  name: string,
  phase: ObservedExperimentRun['phase'],
  extra: Partial<ObservedExperimentRun> = {},
): ObservedExperimentRun {
  return { name, phase, terminate: false, ownedByExperiment: true, ...extra };
}
