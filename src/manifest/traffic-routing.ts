// The traffic routers' configuration blocks as Rollgate reads them (Gateway API, SMI, Istio, NGINX, Traefik, Ambassador, APISIX, App Mesh): one reader for validation and routers.
import { z } from 'zod';
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

/** `trafficRouting.traefik` as Rollgate reads it. */
export interface TraefikConfig {
  /** The TraefikService whose `spec.weighted.services` carry canaryService and stableService. */
  weightedTraefikServiceName: string;
}

/** Fields of `trafficRouting.traefik` Rollgate reads (all Argo has). */
export const TRAEFIK_FIELDS = ['weightedTraefikServiceName'] as const;

/** `trafficRouting.ambassador` as Rollgate reads it. */
export interface AmbassadorConfig {
  /** The Mappings to give a canary Mapping each (names in the rollout's namespace). */
  mappings: string[];
}

/** Fields of `trafficRouting.ambassador` Rollgate reads (all Argo has). */
export const AMBASSADOR_FIELDS = ['mappings'] as const;

/** `trafficRouting.apisix` as Rollgate reads it. */
export interface ApisixConfig {
  /** The ApisixRoute whose HTTP rules weight canaryService and stableService. */
  route: string;
  /** The names of its `spec.http` rules to weight (Argo's default: one rule named like the route). */
  rules: string[];
}

/** Fields of `trafficRouting.apisix` and of its `route` Rollgate reads (all Argo has). */
export const APISIX_FIELDS = { block: ['route'], route: ['name', 'rules'] } as const;

/** `trafficRouting.appMesh` as Rollgate reads it. */
export interface AppMeshConfig {
  /** The VirtualService whose VirtualRouter's routes weight the two VirtualNodes. */
  virtualService: string;
  /** The VirtualRouter routes to weight; empty: every route with a target of either VirtualNode. */
  routes: string[];
  canaryVirtualNode: string;
  stableVirtualNode: string;
}

/** Fields of `trafficRouting.appMesh` and of its parts Rollgate reads (all Argo has). */
export const APP_MESH_FIELDS = {
  block: ['virtualService', 'virtualNodeGroup'],
  virtualService: ['name', 'routes'],
  virtualNodeGroup: ['canaryVirtualNodeRef', 'stableVirtualNodeRef'],
  canaryVirtualNodeRef: ['name'],
  stableVirtualNodeRef: ['name'],
} as const;

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

/** Reads `trafficRouting.traefik`: the weighted TraefikService's name is required, as in Argo. */
export function readTraefikConfig(raw: unknown): TraefikConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const name = raw['weightedTraefikServiceName'];
  if (name === undefined)
    return [
      { field: ['weightedTraefikServiceName'], message: 'required: the weighted TraefikService to edit' },
    ];
  if (typeof name !== 'string' || name === '')
    return [
      { field: ['weightedTraefikServiceName'], message: 'must name a TraefikService (a non-empty string)' },
    ];
  return { weightedTraefikServiceName: name };
}

/** Reads `trafficRouting.ambassador`: a non-empty list of Mapping names, none twice. */
export function readAmbassadorConfig(raw: unknown): AmbassadorConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const list = raw['mappings'];
  if (!Array.isArray(list) || list.length === 0)
    return [{ field: ['mappings'], message: 'must list the Mappings to split (at least one name)' }];
  const problems: ConfigProblem[] = [];
  const mappings: string[] = [];
  list.forEach((name: unknown, index) => {
    if (typeof name !== 'string' || name === '')
      problems.push({ field: ['mappings', index], message: 'must name a Mapping' });
    else if (mappings.includes(name))
      problems.push({ field: ['mappings', index], message: `"${name}" is listed twice` });
    else mappings.push(name);
  });
  return problems.length > 0 ? problems : { mappings };
}

/** A list of distinct non-empty names at `field` (absent: empty), or the problems with it. */
function readNameList(raw: unknown, field: FieldPath, what: string): string[] | ConfigProblem[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) return [{ field, message: `must be a list of ${what} names` }];
  const problems: ConfigProblem[] = [];
  const names: string[] = [];
  raw.forEach((name: unknown, index) => {
    if (typeof name !== 'string' || name === '')
      problems.push({ field: [...field, index], message: `must name a ${what}` });
    else if (names.includes(name))
      problems.push({ field: [...field, index], message: `"${name}" is listed twice` });
    else names.push(name);
  });
  return problems.length > 0 ? problems : names;
}

/** The non-empty string `<at>.name`, or the problem with it. */
function readRefName(raw: unknown, at: FieldPath, what: string): string | ConfigProblem {
  if (!isRecord(raw)) return { field: at, message: `required: an object naming the ${what}` };
  const name = raw['name'];
  if (typeof name !== 'string' || name === '')
    return { field: [...at, 'name'], message: `must name the ${what} (a non-empty string)` };
  return name;
}

/** Reads `trafficRouting.apisix`: the ApisixRoute's name; its rules default to one named like it, as in Argo. */
export function readApisixConfig(raw: unknown): ApisixConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const route = readRefName(raw['route'], ['route'], 'ApisixRoute');
  if (typeof route !== 'string') return [route];
  const rules = readNameList((raw['route'] as Record<string, unknown>)['rules'], ['route', 'rules'], 'rule');
  if (rules.length > 0 && typeof rules[0] !== 'string') return rules as ConfigProblem[];
  const names = rules as string[];
  return { route, rules: names.length > 0 ? names : [route] };
}

/** Reads `trafficRouting.appMesh`: the VirtualService and both VirtualNodes are required, as in Argo. */
export function readAppMeshConfig(raw: unknown): AppMeshConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const problems: ConfigProblem[] = [];
  const service = readRefName(raw['virtualService'], ['virtualService'], 'VirtualService');
  if (typeof service !== 'string') problems.push(service);
  const routes = isRecord(raw['virtualService'])
    ? readNameList(raw['virtualService']['routes'], ['virtualService', 'routes'], 'route')
    : [];
  if (routes.length > 0 && typeof routes[0] !== 'string') problems.push(...(routes as ConfigProblem[]));
  const group = raw['virtualNodeGroup'];
  const nodes = (['canaryVirtualNodeRef', 'stableVirtualNodeRef'] as const).map((field) =>
    isRecord(group)
      ? readRefName(group[field], ['virtualNodeGroup', field], 'VirtualNode')
      : { field: ['virtualNodeGroup'], message: 'required: the canary and stable VirtualNodes' },
  );
  for (const node of nodes)
    if (
      typeof node !== 'string' &&
      !problems.some((p) => p.message === node.message && p.field.join() === node.field.join())
    )
      problems.push(node);
  const [canary, stable] = nodes;
  if (problems.length === 0 && canary === stable)
    problems.push({
      field: ['virtualNodeGroup', 'stableVirtualNodeRef', 'name'],
      message: `must differ from the canaryVirtualNodeRef ("${String(canary)}")`,
    });
  if (problems.length > 0) return problems;
  return {
    virtualService: service as string,
    routes: routes as string[],
    canaryVirtualNode: canary as string,
    stableVirtualNode: stable as string,
  };
}

/** A VirtualService named by `trafficRouting.istio` and which of its routes carry the split. */
export interface IstioVirtualServiceRef {
  name: string;
  /** From Istio's `name.namespace` shorthand; the rollout's namespace when absent. */
  namespace?: string | undefined;
  /** HTTP routes by name; empty: the VirtualService's only (non-managed) HTTP route. */
  routes: string[];
  /** TLS routes by port and SNI hosts; empty: the only TLS route, if any. */
  tlsRoutes: Array<{ port?: number | undefined; sniHosts: string[] }>;
  /** TCP routes by port; empty: the only TCP route, if any. */
  tcpRoutes: Array<{ port?: number | undefined }>;
}

/** `trafficRouting.istio` as Rollgate reads it. */
export interface IstioConfig {
  virtualServices: IstioVirtualServiceRef[];
  /** Subset-level split: the subsets are pinned to the pod-template hashes. */
  destinationRule?: { name: string; canarySubsetName: string; stableSubsetName: string } | undefined;
}

/** Fields of `trafficRouting.istio` Rollgate reads. */
export const ISTIO_FIELDS = ['virtualService', 'virtualServices', 'destinationRule'] as const;
/** Fields of one VirtualService entry Rollgate reads. */
export const ISTIO_VIRTUAL_SERVICE_FIELDS = ['name', 'routes', 'tlsRoutes', 'tcpRoutes'] as const;
/** Fields of `istio.destinationRule` Rollgate reads. */
export const ISTIO_DESTINATION_RULE_FIELDS = ['name', 'canarySubsetName', 'stableSubsetName'] as const;

/** Istio's `name.namespace` shorthand (a trailing `.cluster.local` dropped), as Argo reads it. */
export function splitIstioName(value: string): { name: string; namespace?: string } {
  const fields = value.replace(/\.cluster\.local$/, '').split('.');
  if (fields.length < 2) return { name: fields[0] ?? value };
  return { name: fields.slice(0, -1).join('.'), namespace: fields.at(-1)! };
}

function readVirtualService(
  raw: unknown,
  at: FieldPath,
  problems: ConfigProblem[],
): IstioVirtualServiceRef | undefined {
  if (!isRecord(raw)) {
    problems.push({ field: at, message: 'must be an object with a name' });
    return undefined;
  }
  const name = raw['name'];
  if (typeof name !== 'string' || name === '') {
    problems.push({ field: [...at, 'name'], message: 'must name a VirtualService' });
    return undefined;
  }
  const list = (field: string): unknown[] => {
    const value = raw[field];
    if (value === undefined) return [];
    if (Array.isArray(value)) return value;
    problems.push({ field: [...at, field], message: 'must be a list' });
    return [];
  };
  const routes: string[] = [];
  list('routes').forEach((route, index) => {
    if (typeof route === 'string' && route !== '') routes.push(route);
    else problems.push({ field: [...at, 'routes', index], message: 'must be an HTTP route name' });
  });
  const port = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
  const tlsRoutes = list('tlsRoutes').map((route) => ({
    port: isRecord(route) ? port(route['port']) : undefined,
    sniHosts:
      isRecord(route) && Array.isArray(route['sniHosts'])
        ? route['sniHosts'].filter((host): host is string => typeof host === 'string')
        : [],
  }));
  const tcpRoutes = list('tcpRoutes').map((route) => ({
    port: isRecord(route) ? port(route['port']) : undefined,
  }));
  const split = splitIstioName(name);
  return { ...split, routes, tlsRoutes, tcpRoutes };
}

/** Reads `trafficRouting.istio`; returns the problems instead when a VirtualService or subset is not named. */
export function readIstioConfig(raw: unknown): IstioConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const problems: ConfigProblem[] = [];
  const virtualServices: IstioVirtualServiceRef[] = [];
  const single = raw['virtualService'];
  const many = raw['virtualServices'];
  if (single !== undefined && many !== undefined)
    problems.push({
      field: ['virtualServices'],
      message: 'set only one of virtualService and virtualServices',
    });
  if (single !== undefined) {
    const read = readVirtualService(single, ['virtualService'], problems);
    if (read) virtualServices.push(read);
  }
  if (many !== undefined) {
    if (!Array.isArray(many)) problems.push({ field: ['virtualServices'], message: 'must be a list' });
    else
      many.forEach((entry: unknown, index) => {
        const read = readVirtualService(entry, ['virtualServices', index], problems);
        if (read) virtualServices.push(read);
      });
  }
  if (single === undefined && many === undefined)
    problems.push({ field: [], message: 'names no VirtualService: set virtualService or virtualServices' });
  const rule = raw['destinationRule'];
  let destinationRule: IstioConfig['destinationRule'];
  if (rule !== undefined) {
    if (!isRecord(rule)) problems.push({ field: ['destinationRule'], message: 'must be an object' });
    else {
      const fields = ISTIO_DESTINATION_RULE_FIELDS.map((field) => {
        const value = rule[field];
        if (typeof value === 'string' && value !== '') return value;
        problems.push({ field: ['destinationRule', field], message: 'required (a non-empty string)' });
        return '';
      });
      const [name, canarySubsetName, stableSubsetName] = fields as [string, string, string];
      if (canarySubsetName !== '' && canarySubsetName === stableSubsetName)
        problems.push({
          field: ['destinationRule', 'canarySubsetName'],
          message: 'must differ from stableSubsetName',
        });
      destinationRule = { name, canarySubsetName, stableSubsetName };
    }
  }
  if (problems.length > 0) return problems;
  return { virtualServices, ...(destinationRule ? { destinationRule } : {}) };
}

/** The annotation prefix of the NGINX Ingress controller, unless `annotationPrefix` says otherwise. */
export const NGINX_DEFAULT_ANNOTATION_PREFIX = 'nginx.ingress.kubernetes.io';

/** Fields of `trafficRouting.nginx` Rollgate reads (all of Argo's). */
export const NGINX_FIELDS = [
  'stableIngress',
  'stableIngresses',
  'annotationPrefix',
  'additionalIngressAnnotations',
  'canaryIngressAnnotations',
] as const;

const annotationMap = z.record(
  z.string().min(1, { error: 'an annotation key must not be empty' }),
  z.string({ error: 'must be a string (quote numbers and booleans)' }),
  { error: 'must be a map of annotation keys to string values' },
);

/**
 * `trafficRouting.nginx` as Argo defines it. Fields Rollgate does not know are left to the
 * unsupported-field check (so they are named as unsupported, not as a shape error).
 */
export const nginxTrafficRoutingSchema = z
  .object({
    stableIngress: z
      .string({ error: 'must name an Ingress' })
      .min(1, { error: 'must name an Ingress' })
      .optional(),
    stableIngresses: z
      .array(z.string({ error: 'must name an Ingress' }).min(1, { error: 'must name an Ingress' }), {
        error: 'must be a list of Ingress names',
      })
      .min(1, { error: 'must name at least one Ingress' })
      .optional(),
    annotationPrefix: z
      .string({ error: 'must be an annotation prefix' })
      .min(1, { error: 'must not be empty (default nginx.ingress.kubernetes.io)' })
      .optional(),
    additionalIngressAnnotations: annotationMap.optional(),
    canaryIngressAnnotations: annotationMap.optional(),
  })
  .superRefine((block, ctx) => {
    if (block.stableIngress !== undefined && block.stableIngresses !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['stableIngresses'],
        message: 'set only one of stableIngress and stableIngresses',
      });
    else if (block.stableIngress === undefined && block.stableIngresses === undefined)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'names no Ingress: set stableIngress or stableIngresses',
      });
    block.stableIngresses?.forEach((name, index) => {
      if (block.stableIngresses!.indexOf(name) !== index)
        ctx.addIssue({
          code: 'custom',
          path: ['stableIngresses', index],
          message: `"${name}" is listed twice`,
        });
    });
  });

/** `trafficRouting.nginx` as Rollgate reads it. */
export interface NginxConfig {
  /** The stable Ingresses, one canary Ingress each (`stableIngress` is a list of one). */
  stableIngresses: string[];
  /** {@link NGINX_DEFAULT_ANNOTATION_PREFIX} when unset. */
  annotationPrefix: string;
  /** Keys without the prefix get it (`canary-by-header` → `<prefix>/canary-by-header`), as Argo does. */
  additionalIngressAnnotations: Record<string, string>;
  /** Written as they are, keys included. */
  canaryIngressAnnotations: Record<string, string>;
}

/** Reads `trafficRouting.nginx`; returns the problems instead when no Ingress, or both forms, are named. */
export function readNginxConfig(raw: unknown): NginxConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const parsed = nginxTrafficRoutingSchema.safeParse(raw);
  if (!parsed.success)
    return parsed.error.issues.map((issue) => ({
      field: issue.path.filter((key): key is string | number => typeof key !== 'symbol'),
      message: issue.message,
    }));
  const block = parsed.data;
  return {
    stableIngresses:
      block.stableIngresses ?? (block.stableIngress !== undefined ? [block.stableIngress] : []),
    annotationPrefix: block.annotationPrefix ?? NGINX_DEFAULT_ANNOTATION_PREFIX,
    additionalIngressAnnotations: block.additionalIngressAnnotations ?? {},
    canaryIngressAnnotations: block.canaryIngressAnnotations ?? {},
  };
}
