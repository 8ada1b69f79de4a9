// validate on an experiment step's template weights: driven with Istio, SMI and ALB; refused at the line elsewhere.
import { describe, expect, it } from 'vitest';
import { validateManifests } from '../../../src/manifest/validate.ts';
import {
  EXPERIMENT_WEIGHT_ROUTERS,
  routersWithoutExperimentWeights,
} from '../../../src/manifest/unsupported-fields.ts';
import { TRAFFIC_PROVIDERS } from '../../../src/traffic/index.ts';
import { ROLLOUT_YAML } from '../../builders/rollout-manifest.ts';

const SERVICES = '      canaryService: web-canary\n      stableService: web-stable\n';

/** ROLLOUT_YAML with `routing` under canary and its last pause replaced by an experiment step (the step from line 28, plus the routing lines). */
function withExperiment(routing: string, weights: number[]): string {
  const templates = weights
    .map(
      (weight, i) =>
        `              - name: t${i}\n                specRef: canary\n                weight: ${weight}\n`,
    )
    .join('');
  return ROLLOUT_YAML.replace('    canary:\n', `    canary:\n${routing}`).replace(
    '        - pause: {}\n',
    `        - experiment:\n            templates:\n${templates}`,
  );
}

function errorsOf(text: string): string[] {
  const report = validateManifests([{ file: 'rollout.yaml', text }]);
  return report.objects.flatMap((o) => o.errors.map((e) => `${e.line} ${e.path}: ${e.message}`));
}

const ROUTERS = {
  istio: `${SERVICES}      trafficRouting:\n        istio:\n          virtualService:\n            name: web\n            routes: [primary]\n`,
  smi: `${SERVICES}      trafficRouting:\n        smi: {}\n`,
  alb: `${SERVICES}      trafficRouting:\n        alb:\n          ingress: web\n          servicePort: 80\n`,
  nginx: `${SERVICES}      trafficRouting:\n        nginx:\n          stableIngress: web\n`,
  gatewayPlugin: `${SERVICES}      trafficRouting:\n        plugins:\n          argoproj-labs/gatewayAPI:\n            httpRoute: web\n`,
};

describe('validate: experiment template weights', () => {
  it.each(['istio', 'smi', 'alb'] as const)('accepts a weight with the %s router', (router) => {
    expect(errorsOf(withExperiment(ROUTERS[router], [20, 10]))).toEqual([]);
  });

  it('refuses a weight with a router that sends experiments no traffic, at the weight line, naming the router', () => {
    const nginx = withExperiment(ROUTERS.nginx, [20]);
    expect(errorsOf(nginx)).toEqual([
      '37 spec.strategy.canary.steps[3].experiment.templates[0].weight: unsupported: strategy.canary.steps[3].experiment.templates[0].weight with nginx (only the Istio, SMI and ALB routers send traffic to experiment templates, as in Argo)',
    ]);
    const plugin = withExperiment(ROUTERS.gatewayPlugin, [20]);
    expect(errorsOf(plugin)).toEqual([
      '38 spec.strategy.canary.steps[3].experiment.templates[0].weight: unsupported: strategy.canary.steps[3].experiment.templates[0].weight with plugins["argoproj-labs/gatewayAPI"] (only the Istio, SMI and ALB routers send traffic to experiment templates, as in Argo)',
    ]);
  });

  it('refuses a weight without trafficRouting (Argo does too)', () => {
    expect(errorsOf(withExperiment('', [20]))).toEqual([
      '32 spec.strategy.canary.steps[3].experiment.templates[0].weight: requires strategy.canary.trafficRouting (the weight is a share of what the router sends)',
    ]);
  });

  it("refuses weights that leave the stable less than nothing: the templates' and the canary's last setWeight above the total", () => {
    // The last setWeight before the step is 60: 30 + 20 more is over 100.
    expect(errorsOf(withExperiment(ROUTERS.smi, [30, 20]))).toEqual([
      "33 spec.strategy.canary.steps[3].experiment.templates: the templates' weights (50) and the canary's (60, its last setWeight) add up to more than 100: the stable would get less than nothing",
    ]);
    expect(errorsOf(withExperiment(ROUTERS.smi, [30, 10]))).toEqual([]);
    expect(errorsOf(withExperiment(ROUTERS.smi, [-5]))).toEqual([
      '36 spec.strategy.canary.steps[3].experiment.templates[0].weight: must be at least 0, got -5',
    ]);
  });

  it("the routers validation lets through are the ones the provider table's translators weight experiments with", () => {
    const weighting = TRAFFIC_PROVIDERS.filter((provider) => provider.experimentDestinations).map(
      (provider) => provider.name,
    );
    expect(weighting.sort()).toEqual([...EXPERIMENT_WEIGHT_ROUTERS].sort());
    for (const provider of TRAFFIC_PROVIDERS) {
      const [field, plugin] = provider.name.split('.');
      const routing = plugin === undefined ? { [field!]: {} } : { plugins: { [plugin]: {} } };
      expect(routersWithoutExperimentWeights(routing).length === 0, provider.name).toBe(
        provider.experimentDestinations,
      );
    }
  });
});
