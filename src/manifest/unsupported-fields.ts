// What Rollgate does not honour yet: each Argo field is either an error (behaviour would differ) or a warning.
import { formatFieldPath, type FieldPath } from './field-path.ts';
import type { IssueCollector } from './validation-issue.ts';
import { EXCLUSIVE_STEP_KINDS, TRAFFIC_ROUTING_PROVIDERS } from './rollout.ts';
import {
  GATEWAY_API_FIELDS,
  GATEWAY_API_PLUGIN,
  ISTIO_DESTINATION_RULE_FIELDS,
  ISTIO_FIELDS,
  ISTIO_VIRTUAL_SERVICE_FIELDS,
  NGINX_FIELDS,
  TRAEFIK_FIELDS,
  AMBASSADOR_FIELDS,
  APISIX_FIELDS,
  APP_MESH_FIELDS,
  gatewayApiBlockOf,
} from './traffic-routing.ts';
import { ALB_FIELDS } from './alb-traffic-routing.ts';
import type { TrafficRouting } from './rollout.ts';
import type { CanaryStepKind } from './rollout.ts';
import { OTHER_METRIC_PROVIDERS } from './analysis.ts';
import {
  CONTOUR_PLUGIN,
  CONTOUR_PLUGIN_FIELDS,
  OPENSHIFT_PLUGIN,
  OPENSHIFT_PLUGIN_FIELDS,
} from './traffic-router-plugins.ts';

/**
 * Traffic routers Rollgate drives through `strategy.canary.trafficRouting` (src/traffic has one
 * translator each). A router listed here stops being reported as unsupported; every other one set is
 * an error, never silently ignored. `plugins` is driven only for the plugins in
 * {@link SUPPORTED_TRAFFIC_ROUTER_PLUGINS}.
 */
export const SUPPORTED_TRAFFIC_ROUTERS: readonly string[] = [
  'gatewayAPI',
  'smi',
  'istio',
  'nginx',
  'traefik',
  'ambassador',
  'apisix',
  'appMesh',
  'alb',
  'plugins',
];

/** The `trafficRouting.plugins` entries Rollgate drives itself (read as Argo's plugin reads them). */
export const SUPPORTED_TRAFFIC_ROUTER_PLUGINS: readonly string[] = [
  GATEWAY_API_PLUGIN,
  CONTOUR_PLUGIN,
  OPENSHIFT_PLUGIN,
];

/**
 * The routers a trafficRouting sets that Rollgate does not drive, as printed (`istio`,
 * `plugins["acme/router"]`); empty when Rollgate drives all of them. The planner refuses a rollout
 * for which this is not empty.
 */
export function unsupportedTrafficRouters(routing: TrafficRouting | Record<string, unknown>): string[] {
  const found: string[] = [];
  const set = routing as Record<string, unknown>;
  for (const provider of TRAFFIC_ROUTING_PROVIDERS) {
    const block = set[provider];
    if (block === undefined) continue;
    if (provider === 'plugins' && isRecord(block)) {
      for (const name of Object.keys(block))
        if (!SUPPORTED_TRAFFIC_ROUTER_PLUGINS.includes(name)) found.push(`plugins[${JSON.stringify(name)}]`);
    } else if (!SUPPORTED_TRAFFIC_ROUTERS.includes(provider)) found.push(provider);
  }
  return found;
}

/**
 * The routers that send an experiment step's weighted templates their share (Argo: SMI, ALB and Istio; its
 * plugin interface too, but the Gateway API plugin ignores the extra destinations). src/traffic's provider
 * table marks the same rows (`experimentDestinations`); a test keeps the two in step.
 */
export const EXPERIMENT_WEIGHT_ROUTERS: readonly string[] = ['istio', 'smi', 'alb'];

/**
 * The routers a trafficRouting sets that cannot weight experiment templates, as printed (`nginx`,
 * `plugins["argoproj-labs/gatewayAPI"]`); empty when every router set can (or none is set).
 */
export function routersWithoutExperimentWeights(routing: TrafficRouting | Record<string, unknown>): string[] {
  const set = routing as Record<string, unknown>;
  return TRAFFIC_ROUTING_PROVIDERS.flatMap((provider) => {
    const block = set[provider];
    if (block === undefined || EXPERIMENT_WEIGHT_ROUTERS.includes(provider)) return [];
    if (provider === 'plugins' && isRecord(block))
      return Object.keys(block).map((name) => `plugins[${JSON.stringify(name)}]`);
    return [provider];
  });
}

/** How a field Rollgate does not honour is reported. */
export type UnsupportedSeverity = 'error' | 'warning';

/** One row of the unsupported-field policy (also rendered in docs/spec.md). */
export interface UnsupportedRule {
  /** Field path pattern as documented (`[]` marks any list index). */
  field: string;
  severity: UnsupportedSeverity;
  /** Why, as printed after `unsupported: <path>`. */
  reason: string;
}

/** The policy for Rollout fields, in the order the checks apply. */
export const ROLLOUT_UNSUPPORTED_RULES = {
  trafficRouting: {
    field: 'spec.strategy.canary.trafficRouting.<another provider>',
    severity: 'error',
    reason:
      'Rollgate drives the Gateway API, SMI, Istio, NGINX, Traefik, Ambassador, APISIX, App Mesh and ALB routers',
  },
  trafficRoutingPlugin: {
    field: 'spec.strategy.canary.trafficRouting.plugins.<name>',
    severity: 'error',
    reason: `Rollgate runs no router plugins; it drives ${SUPPORTED_TRAFFIC_ROUTER_PLUGINS.join(', ')} itself`,
  },
  gatewayApiField: {
    field: 'spec.strategy.canary.trafficRouting.gatewayAPI.<tlsRoute|tlsRoutes|*Selector|…>',
    severity: 'error',
    reason: 'Rollgate drives the HTTPRoutes, GRPCRoutes and TCPRoutes named in the block',
  },
  istioField: {
    field:
      'spec.strategy.canary.trafficRouting.istio.<…>, virtualService(s).<…>, destinationRule.<additionalSubsetNames|…>',
    severity: 'error',
    reason:
      'Rollgate reads virtualService(s) {name, routes, tlsRoutes, tcpRoutes} and destinationRule {name, canarySubsetName, stableSubsetName}',
  },
  nginxField: {
    field: 'spec.strategy.canary.trafficRouting.nginx.<…>',
    severity: 'error',
    reason: `Rollgate reads ${NGINX_FIELDS.join(', ')}`,
  },
  traefikField: {
    field: 'spec.strategy.canary.trafficRouting.traefik.<…>',
    severity: 'error',
    reason: `Rollgate reads ${TRAEFIK_FIELDS.join(', ')}`,
  },
  ambassadorField: {
    field: 'spec.strategy.canary.trafficRouting.ambassador.<…>',
    severity: 'error',
    reason: `Rollgate reads ${AMBASSADOR_FIELDS.join(', ')}`,
  },
  apisixField: {
    field: 'spec.strategy.canary.trafficRouting.apisix.<…>, route.<…>',
    severity: 'error',
    reason: 'Rollgate reads route {name, rules}',
  },
  appMeshField: {
    field: 'spec.strategy.canary.trafficRouting.appMesh.<…>, virtualService.<…>, virtualNodeGroup.<…>',
    severity: 'error',
    reason:
      'Rollgate reads virtualService {name, routes} and virtualNodeGroup {canaryVirtualNodeRef, stableVirtualNodeRef} {name}',
  },
  albField: {
    field: 'spec.strategy.canary.trafficRouting.alb.<…>',
    severity: 'error',
    reason: `Rollgate reads ${ALB_FIELDS.join(', ')}`,
  },
  albHeaderRegex: {
    field: 'spec.strategy.canary.steps[].setHeaderRoute.match[].headerValue.regex (with the ALB router)',
    severity: 'error',
    reason: 'an ALB header condition matches exact values and prefixes (as value*) only',
  },
  pluginRouterField: {
    field: `spec.strategy.canary.trafficRouting.plugins["${CONTOUR_PLUGIN}" | "${OPENSHIFT_PLUGIN}"].<…>`,
    severity: 'error',
    reason: `Rollgate reads ${CONTOUR_PLUGIN_FIELDS.join(', ')} (${CONTOUR_PLUGIN}) and ${OPENSHIFT_PLUGIN_FIELDS.join(', ')} (${OPENSHIFT_PLUGIN})`,
  },
  experimentWeight: {
    field:
      'spec.strategy.canary.steps[].experiment.templates[].weight (with a router other than Istio, SMI or ALB)',
    severity: 'error',
    reason: 'only the Istio, SMI and ALB routers send traffic to experiment templates, as in Argo',
  },
  experimentFieldRef: {
    field: 'spec.strategy.canary.steps[].experiment.analyses[].args[].valueFrom.fieldRef',
    severity: 'error',
    reason: "an experiment step's analysis args are values or podTemplateHashValue",
  },
  plugin: {
    field: 'spec.strategy.canary.steps[].plugin',
    severity: 'error',
    reason: 'Rollgate does not run step plugins',
  },
  setHeaderRoute: {
    field:
      'spec.strategy.canary.steps[].setHeaderRoute (without the Gateway API, Istio, APISIX, Contour or ALB router)',
    severity: 'error',
    reason: 'header routes need the Gateway API, Istio, APISIX, Contour or ALB router',
  },
  scaleBesideOtherStep: {
    field: 'spec.strategy.canary.steps[].setCanaryScale (beside setWeight, pause, experiment or analysis)',
    severity: 'error',
    reason: 'Rollgate runs setCanaryScale in a step of its own or beside a route: put it in the step before',
  },
  setMirrorRoute: {
    field: 'spec.strategy.canary.steps[].setMirrorRoute (without the Istio router)',
    severity: 'error',
    reason: 'mirror routes need the Istio router',
  },
  pingPong: {
    field: 'spec.strategy.canary.pingPong (without the ALB router, or with another router beside it)',
    severity: 'error',
    reason: 'Rollgate drives ping-pong Services with the ALB router alone',
  },
  analysisRunMetadata: {
    field: 'spec.strategy.canary.(analysis|steps[].analysis).analysisRunMetadata',
    severity: 'warning',
    reason: 'the labels/annotations are not added to AnalysisRuns yet',
  },
} as const satisfies Record<string, UnsupportedRule>;

/** The policy for analysis fields. */
export const ANALYSIS_UNSUPPORTED_RULES = {
  provider: {
    field: 'spec.metrics[].provider.plugin',
    severity: 'error',
    reason:
      'Rollgate runs prometheus, web, job, datadog, newRelic, graphite, cloudWatch, influxdb, wavefront, skywalking and kayenta metrics',
  },
  sigv4Credentials: {
    field: 'spec.metrics[].provider.prometheus.authentication.sigv4.<profile|roleArn>',
    severity: 'error',
    reason:
      'Rollgate signs with the credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN only',
  },
  webAuthentication: {
    field: 'spec.metrics[].provider.web.authentication.<sigv4|basicAuth>',
    severity: 'error',
    reason: 'the web provider authenticates with oauth2 only, as Argo’s does (use headers for the rest)',
  },
} as const satisfies Record<string, UnsupportedRule>;

function report(sink: IssueCollector, path: FieldPath, printed: string, rule: UnsupportedRule): void {
  const message = `unsupported: ${printed} (${rule.reason})`;
  if (rule.severity === 'error') sink.error(path, message);
  else sink.warn(path, message);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reports every Rollout field Rollgate does not honour. Works on the raw object (before the shape
 * check) so an unsupported feature is named even when its object would not otherwise parse.
 */
export function checkUnsupportedRolloutFields(value: Record<string, unknown>, sink: IssueCollector): void {
  const r = ROLLOUT_UNSUPPORTED_RULES;
  const spec = value['spec'];
  if (!isRecord(spec)) return;
  const strategy = spec['strategy'];
  if (!isRecord(strategy)) return;
  const blueGreen = strategy['blueGreen'];
  if (isRecord(blueGreen)) checkUnsupportedBlueGreenFields(blueGreen, sink);
  const canary = strategy['canary'];
  if (!isRecord(canary)) return;
  const at = (...rest: Array<string | number>): FieldPath => ['spec', 'strategy', 'canary', ...rest];
  const trafficRouting = canary['trafficRouting'];
  if (isRecord(trafficRouting)) {
    for (const provider of TRAFFIC_ROUTING_PROVIDERS) {
      const block = trafficRouting[provider];
      if (block === undefined) continue;
      if (provider === 'plugins' && isRecord(block)) {
        for (const name of Object.keys(block)) {
          if (SUPPORTED_TRAFFIC_ROUTER_PLUGINS.includes(name)) continue;
          report(
            sink,
            at('trafficRouting', 'plugins', name),
            `strategy.canary.trafficRouting.plugins[${JSON.stringify(name)}]`,
            r.trafficRoutingPlugin,
          );
        }
      } else if (!SUPPORTED_TRAFFIC_ROUTERS.includes(provider)) {
        report(
          sink,
          at('trafficRouting', provider),
          `strategy.canary.trafficRouting.${provider}`,
          r.trafficRouting,
        );
      }
    }
    checkIstioFields(trafficRouting['istio'], at('trafficRouting', 'istio'), sink);
    const nginx = trafficRouting['nginx'];
    if (isRecord(nginx))
      for (const field of Object.keys(nginx))
        if (!(NGINX_FIELDS as readonly string[]).includes(field))
          report(
            sink,
            at('trafficRouting', 'nginx', field),
            `strategy.canary.trafficRouting.nginx.${field}`,
            r.nginxField,
          );
    const traefik = trafficRouting['traefik'];
    if (isRecord(traefik))
      for (const field of Object.keys(traefik))
        if (!(TRAEFIK_FIELDS as readonly string[]).includes(field))
          report(
            sink,
            at('trafficRouting', 'traefik', field),
            `strategy.canary.trafficRouting.traefik.${field}`,
            r.traefikField,
          );
    const ambassador = trafficRouting['ambassador'];
    if (isRecord(ambassador))
      for (const field of Object.keys(ambassador))
        if (!(AMBASSADOR_FIELDS as readonly string[]).includes(field))
          report(
            sink,
            at('trafficRouting', 'ambassador', field),
            `strategy.canary.trafficRouting.ambassador.${field}`,
            r.ambassadorField,
          );
    checkNestedFields(trafficRouting['apisix'], 'apisix', APISIX_FIELDS, at, sink, r.apisixField);
    checkNestedFields(trafficRouting['appMesh'], 'appMesh', APP_MESH_FIELDS, at, sink, r.appMeshField);
    const plugins = isRecord(trafficRouting['plugins']) ? trafficRouting['plugins'] : {};
    for (const [plugin, fields] of [
      [CONTOUR_PLUGIN, CONTOUR_PLUGIN_FIELDS],
      [OPENSHIFT_PLUGIN, OPENSHIFT_PLUGIN_FIELDS],
    ] as const) {
      const block = plugins[plugin];
      if (isRecord(block))
        for (const field of Object.keys(block))
          if (!(fields as readonly string[]).includes(field))
            report(
              sink,
              at('trafficRouting', 'plugins', plugin, field),
              `strategy.canary.trafficRouting.plugins[${JSON.stringify(plugin)}].${field}`,
              r.pluginRouterField,
            );
    }
    const alb = trafficRouting['alb'];
    if (isRecord(alb))
      for (const field of Object.keys(alb))
        if (!(ALB_FIELDS as readonly string[]).includes(field))
          report(
            sink,
            at('trafficRouting', 'alb', field),
            `strategy.canary.trafficRouting.alb.${field}`,
            r.albField,
          );
    for (const block of gatewayApiBlockOf(trafficRouting)) {
      if (!isRecord(block.raw)) continue;
      for (const field of Object.keys(block.raw)) {
        if ((GATEWAY_API_FIELDS as readonly string[]).includes(field)) continue;
        report(
          sink,
          at('trafficRouting', ...block.path, field),
          `strategy.canary.trafficRouting.${block.printed}.${field}`,
          r.gatewayApiField,
        );
      }
    }
  }
  // Ping-pong is driven with the ALB router as the only one (its Services are weighted in their roles).
  const routers = isRecord(trafficRouting)
    ? TRAFFIC_ROUTING_PROVIDERS.filter((provider) => trafficRouting[provider] !== undefined)
    : [];
  if (canary['pingPong'] !== undefined && (routers.length !== 1 || routers[0] !== 'alb'))
    report(sink, at('pingPong'), 'strategy.canary.pingPong', r.pingPong);
  checkRolloutAnalysis(canary['analysis'], at('analysis'), 'strategy.canary.analysis', sink);
  const steps = canary['steps'];
  if (!Array.isArray(steps)) return;
  // Managed routes are driven where a router can carry them (Gateway API and Istio: header; Istio: mirror).
  const routing = isRecord(trafficRouting) ? trafficRouting : {};
  const driven = {
    setHeaderRoute:
      routing['istio'] !== undefined ||
      routing['apisix'] !== undefined ||
      gatewayApiBlockOf(routing).length > 0 ||
      (isRecord(routing['plugins']) && routing['plugins'][CONTOUR_PLUGIN] !== undefined) ||
      routing['alb'] !== undefined,
    setMirrorRoute: routing['istio'] !== undefined,
  };
  steps.forEach((step: unknown, index) => {
    if (!isRecord(step)) return;
    checkExperimentStep(
      step['experiment'],
      at('steps', index, 'experiment'),
      `strategy.canary.steps[${index}].experiment`,
      routersWithoutExperimentWeights(routing),
      sink,
    );
    for (const kind of [
      'plugin',
      'setHeaderRoute',
      'setMirrorRoute',
    ] as const satisfies readonly CanaryStepKind[]) {
      // A driven route may stand beside another kind, as in Argo (the planner sends it first).
      if ((kind === 'setHeaderRoute' || kind === 'setMirrorRoute') && driven[kind]) continue;
      if (step[kind] !== undefined)
        report(sink, at('steps', index, kind), `strategy.canary.steps[${index}].${kind}`, r[kind]);
    }
    // Argo lets a scale accompany any kind; the planner runs one main kind per step and would drop the
    // other one, so the combination is refused rather than half-run.
    if (
      step['setCanaryScale'] !== undefined &&
      EXCLUSIVE_STEP_KINDS.some((other) => step[other] !== undefined)
    )
      report(
        sink,
        at('steps', index, 'setCanaryScale'),
        `strategy.canary.steps[${index}].setCanaryScale`,
        r.scaleBesideOtherStep,
      );
    const header = step['setHeaderRoute'];
    const matches = isRecord(header) && Array.isArray(header['match']) ? header['match'] : [];
    if (routing['alb'] !== undefined)
      matches.forEach((match: unknown, m) => {
        const value = isRecord(match) ? match['headerValue'] : undefined;
        if (isRecord(value) && value['regex'] !== undefined)
          report(
            sink,
            at('steps', index, 'setHeaderRoute', 'match', m, 'headerValue', 'regex'),
            `strategy.canary.steps[${index}].setHeaderRoute.match[${m}].headerValue.regex`,
            r.albHeaderRegex,
          );
      });
    checkRolloutAnalysis(
      step['analysis'],
      at('steps', index, 'analysis'),
      `strategy.canary.steps[${index}].analysis`,
      sink,
    );
  });
}

// The fields of an experiment step Rollgate does not honour: weighted templates with a router that cannot
// send them traffic (`unweighted`: those set; without any router it is an invalid spec, rollout-checks), fieldRef args.
function checkExperimentStep(
  experiment: unknown,
  path: FieldPath,
  printed: string,
  unweighted: readonly string[],
  sink: IssueCollector,
): void {
  if (!isRecord(experiment)) return;
  const r = ROLLOUT_UNSUPPORTED_RULES;
  const templates = experiment['templates'];
  if (Array.isArray(templates) && unweighted.length > 0)
    templates.forEach((template: unknown, index) => {
      if (isRecord(template) && template['weight'] !== undefined)
        report(
          sink,
          [...path, 'templates', index, 'weight'],
          `${printed}.templates[${index}].weight with ${unweighted.join(', ')}`,
          r.experimentWeight,
        );
    });
  const analyses = experiment['analyses'];
  if (Array.isArray(analyses))
    analyses.forEach((analysis: unknown, index) => {
      if (!isRecord(analysis) || !Array.isArray(analysis['args'])) return;
      analysis['args'].forEach((arg: unknown, argIndex) => {
        if (isRecord(arg) && isRecord(arg['valueFrom']) && arg['valueFrom']['fieldRef'] !== undefined)
          report(
            sink,
            [...path, 'analyses', index, 'args', argIndex, 'valueFrom', 'fieldRef'],
            `${printed}.analyses[${index}].args[${argIndex}].valueFrom.fieldRef`,
            r.experimentFieldRef,
          );
      });
    });
}

// The blue-green fields Rollgate does not honour yet.
function checkUnsupportedBlueGreenFields(blueGreen: Record<string, unknown>, sink: IssueCollector): void {
  const at = (...rest: Array<string | number>): FieldPath => ['spec', 'strategy', 'blueGreen', ...rest];
  for (const field of ['prePromotionAnalysis', 'postPromotionAnalysis'] as const)
    checkRolloutAnalysis(blueGreen[field], at(field), `strategy.blueGreen.${field}`, sink);
}

// The fields of trafficRouting.istio that Rollgate does not read: an error each, never silently ignored.
function checkIstioFields(istio: unknown, path: FieldPath, sink: IssueCollector): void {
  if (!isRecord(istio)) return;
  const rule = ROLLOUT_UNSUPPORTED_RULES.istioField;
  const unknownIn = (block: unknown, known: readonly string[], at: FieldPath): void => {
    if (!isRecord(block)) return;
    for (const field of Object.keys(block))
      if (!known.includes(field))
        report(
          sink,
          [...at, field],
          `strategy.canary.trafficRouting.${formatFieldPath([...at.slice(4), field])}`,
          rule,
        );
  };
  unknownIn(istio, ISTIO_FIELDS, path);
  unknownIn(istio['virtualService'], ISTIO_VIRTUAL_SERVICE_FIELDS, [...path, 'virtualService']);
  if (Array.isArray(istio['virtualServices']))
    istio['virtualServices'].forEach((entry: unknown, index) =>
      unknownIn(entry, ISTIO_VIRTUAL_SERVICE_FIELDS, [...path, 'virtualServices', index]),
    );
  unknownIn(istio['destinationRule'], ISTIO_DESTINATION_RULE_FIELDS, [...path, 'destinationRule']);
}

// The fields of a background or step analysis that do not reach the AnalysisRuns it creates.
function checkRolloutAnalysis(
  analysis: unknown,
  path: FieldPath,
  printed: string,
  sink: IssueCollector,
): void {
  if (!isRecord(analysis)) return;
  const r = ROLLOUT_UNSUPPORTED_RULES;
  const rules = [['analysisRunMetadata', r.analysisRunMetadata]] as const;
  for (const [field, rule] of rules) {
    if (analysis[field] !== undefined) report(sink, [...path, field], `${printed}.${field}`, rule);
  }
}

/** Reports metric providers and authentication settings Rollgate cannot honour, in an AnalysisTemplate/ClusterAnalysisTemplate/AnalysisRun. */
export function checkUnsupportedAnalysisFields(value: Record<string, unknown>, sink: IssueCollector): void {
  const spec = value['spec'];
  if (!isRecord(spec) || !Array.isArray(spec['metrics'])) return;
  spec['metrics'].forEach((metric: unknown, index) => {
    if (!isRecord(metric) || !isRecord(metric['provider'])) return;
    for (const provider of OTHER_METRIC_PROVIDERS) {
      if (metric['provider'][provider] === undefined) continue;
      report(
        sink,
        ['spec', 'metrics', index, 'provider', provider],
        `spec.metrics[${index}].provider.${provider}`,
        ANALYSIS_UNSUPPORTED_RULES.provider,
      );
    }
    const provider = metric['provider'];
    const at = (...rest: Array<string>): FieldPath => ['spec', 'metrics', index, 'provider', ...rest];
    const prometheusAuth = isRecord(provider['prometheus'])
      ? provider['prometheus']['authentication']
      : undefined;
    const sigv4 = isRecord(prometheusAuth) ? prometheusAuth['sigv4'] : undefined;
    for (const field of ['profile', 'roleArn']) {
      if (isRecord(sigv4) && sigv4[field] !== undefined && sigv4[field] !== '')
        report(
          sink,
          at('prometheus', 'authentication', 'sigv4', field),
          `spec.metrics[${index}].provider.prometheus.authentication.sigv4.${field}`,
          ANALYSIS_UNSUPPORTED_RULES.sigv4Credentials,
        );
    }
    const webAuth = isRecord(provider['web']) ? provider['web']['authentication'] : undefined;
    for (const field of ['sigv4', 'basicAuth']) {
      if (isRecord(webAuth) && webAuth[field] !== undefined)
        report(
          sink,
          at('web', 'authentication', field),
          `spec.metrics[${index}].provider.web.authentication.${field}`,
          ANALYSIS_UNSUPPORTED_RULES.webAuthentication,
        );
    }
  });
}

/**
 * Fields of a router block (and of its nested objects, as `fields` names them: `block` for the top, else
 * the nested field) that Argo's block does not have.
 */
function checkNestedFields(
  raw: unknown,
  provider: string,
  fields: Readonly<Record<string, readonly string[]>>,
  at: (...rest: Array<string | number>) => FieldPath,
  sink: IssueCollector,
  rule: UnsupportedRule,
): void {
  const walk = (value: unknown, path: string[], known: readonly string[] | undefined): void => {
    if (!isRecord(value) || known === undefined) return;
    for (const field of Object.keys(value)) {
      if (!known.includes(field)) {
        const where = [provider, ...path, field];
        report(
          sink,
          at('trafficRouting', ...where),
          `strategy.canary.trafficRouting.${where.join('.')}`,
          rule,
        );
      } else walk(value[field], [...path, field], fields[field]);
    }
  };
  walk(raw, [], fields['block']);
}
