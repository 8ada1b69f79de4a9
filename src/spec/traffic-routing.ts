// The traffic routers' configuration blocks as Rollgate reads them (Gateway API, SMI): one reader for validation and routers.
import type { FieldPath } from './field-path.ts';
import type { TrafficRouting } from './rollout.ts';

/** The plugin name Argo Rollouts users write under `trafficRouting.plugins` for the Gateway API. */
export const GATEWAY_API_PLUGIN = 'argoproj-labs/gatewayAPI';

/** The Gateway API route kinds Rollgate edits. */
export type GatewayRouteKind = 'HTTPRoute' | 'GRPCRoute' | 'TCPRoute';

/** One route named by the configuration. */
export interface GatewayRouteRef {
  kind: GatewayRouteKind;
  name: string;
  /** Header routes (setHeaderRoute) go to this route (`httpRoute`: always; `httpRoutes[]`: when set). */
  useHeaderRoutes: boolean;
}

/** The gatewayAPI configuration (the plugin's field names). */
export interface GatewayApiConfig {
  /** Where the routes live; the rollout's namespace when unset. */
  namespace?: string | undefined;
  routes: GatewayRouteRef[];
}

/** Fields of the Gateway API block Rollgate reads (`configMap` is the plugin's own and needs nothing here). */
export const GATEWAY_API_FIELDS = [
  'httpRoute',
  'httpRoutes',
  'grpcRoute',
  'grpcRoutes',
  'tcpRoute',
  'tcpRoutes',
  'namespace',
  'configMap',
] as const;

/** `trafficRouting.smi` as Rollgate reads it. */
export interface SmiConfig {
  /** The Service clients call (the split's `spec.service`); stableService when unset. */
  rootService?: string | undefined;
  /** The TrafficSplit's name; the rollout's name when unset. */
  trafficSplitName?: string | undefined;
}

/** Fields of `trafficRouting.smi` Rollgate reads. */
export const SMI_FIELDS = ['rootService', 'trafficSplitName'] as const;

/** A problem in a configuration block: the field (relative to the block) and what is wrong. */
export interface ConfigProblem {
  field: FieldPath;
  message: string;
}

const SINGLE: ReadonlyArray<[string, GatewayRouteKind]> = [
  ['httpRoute', 'HTTPRoute'],
  ['grpcRoute', 'GRPCRoute'],
  ['tcpRoute', 'TCPRoute'],
];
const LISTS: ReadonlyArray<[string, GatewayRouteKind]> = [
  ['httpRoutes', 'HTTPRoute'],
  ['grpcRoutes', 'GRPCRoute'],
  ['tcpRoutes', 'TCPRoute'],
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The Gateway API block a rollout sets, native or as the plugin, with its path (undefined: none). */
export function gatewayApiBlockOf(
  routing: TrafficRouting,
): Array<{ path: FieldPath; printed: string; raw: unknown }> {
  const blocks: Array<{ path: FieldPath; printed: string; raw: unknown }> = [];
  if (routing.gatewayAPI !== undefined)
    blocks.push({ path: ['gatewayAPI'], printed: 'gatewayAPI', raw: routing.gatewayAPI });
  const plugin = isRecord(routing.plugins) ? routing.plugins[GATEWAY_API_PLUGIN] : undefined;
  if (plugin !== undefined)
    blocks.push({
      path: ['plugins', GATEWAY_API_PLUGIN],
      printed: `plugins["${GATEWAY_API_PLUGIN}"]`,
      raw: plugin,
    });
  return blocks;
}

/**
 * Reads a Gateway API block. Returns the problems instead when a route is named wrongly or none is
 * named at all.
 */
export function readGatewayApiConfig(raw: unknown): GatewayApiConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const problems: ConfigProblem[] = [];
  const routes: GatewayRouteRef[] = [];
  for (const [field, kind] of SINGLE) {
    const value = raw[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value === '')
      problems.push({ field: [field], message: `must name a ${kind} (a non-empty string)` });
    else routes.push({ kind, name: value, useHeaderRoutes: true });
  }
  for (const [field, kind] of LISTS) {
    const value = raw[field];
    if (value === undefined) continue;
    if (!Array.isArray(value)) {
      problems.push({ field: [field], message: 'must be a list of {name, useHeaderRoutes}' });
      continue;
    }
    value.forEach((entry: unknown, index) => {
      const name = isRecord(entry) ? entry['name'] : undefined;
      if (typeof name !== 'string' || name === '')
        problems.push({ field: [field, index, 'name'], message: `must name a ${kind}` });
      else routes.push({ kind, name, useHeaderRoutes: isRecord(entry) && entry['useHeaderRoutes'] === true });
    });
  }
  const namespace = raw['namespace'];
  if (namespace !== undefined && (typeof namespace !== 'string' || namespace === ''))
    problems.push({ field: ['namespace'], message: 'must be a namespace name' });
  if (problems.length === 0 && routes.length === 0)
    problems.push({ field: [], message: 'names no route: set httpRoute, httpRoutes, grpcRoute or tcpRoute' });
  if (problems.length > 0) return problems;
  return { ...(typeof namespace === 'string' ? { namespace } : {}), routes };
}

/** Reads `trafficRouting.smi`; both fields are optional, and a field that is not a name is a problem. */
export function readSmiConfig(raw: unknown): SmiConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const problems: ConfigProblem[] = [];
  const config: SmiConfig = {};
  for (const field of SMI_FIELDS) {
    const value = raw[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value === '')
      problems.push({ field: [field], message: 'must be a name (a non-empty string)' });
    else config[field] = value;
  }
  return problems.length > 0 ? problems : config;
}
