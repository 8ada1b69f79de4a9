// The Contour and OpenShift Route router plugins' blocks under trafficRouting.plugins, read as the plugins read them.
import type { ConfigProblem } from './traffic-routing.ts';

/** The plugin name Argo Rollouts users write under `trafficRouting.plugins` for Contour's HTTPProxy. */
export const CONTOUR_PLUGIN = 'argoproj-labs/contour';

/** The plugin name Argo Rollouts users write under `trafficRouting.plugins` for OpenShift Routes. */
export const OPENSHIFT_PLUGIN = 'argoproj-labs/openshift';

/**
 * Fields of the Contour plugin's block Rollgate reads. `namespace` is from the plugin's early READMEs;
 * the plugin has read HTTPProxies in the rollout's namespace whatever it says since then.
 */
export const CONTOUR_PLUGIN_FIELDS = ['httpProxies', 'namespace'] as const;

/** Fields of the OpenShift plugin's block Rollgate reads; `namespace` is in its README's example, unused by it. */
export const OPENSHIFT_PLUGIN_FIELDS = ['routes', 'namespace'] as const;

/** The Contour plugin's block as Rollgate reads it. */
export interface ContourPluginConfig {
  /** The HTTPProxies whose routes carry canaryService and stableService (the rollout's namespace). */
  httpProxies: string[];
  /** As written; when set it must be the rollout's namespace (the plugin never looks elsewhere). */
  namespace?: string | undefined;
}

/** One Route named by the OpenShift plugin's block: `name`, or `namespace/name` as the plugin splits it. */
export interface OpenShiftRouteRef {
  name: string;
  /** Absent: the rollout's namespace. */
  namespace?: string | undefined;
}

/** The OpenShift plugin's block as Rollgate reads it. */
export interface OpenShiftPluginConfig {
  routes: OpenShiftRouteRef[];
  /** As written; when set it must be the rollout's namespace (the plugin never looks there). */
  namespace?: string | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The non-empty list of distinct non-empty names at `field`, each with its index in the list; what is
 * wrong with it goes to `problems`.
 */
function readNames(
  raw: Record<string, unknown>,
  field: string,
  what: string,
  problems: ConfigProblem[],
): Array<{ name: string; index: number }> {
  const list = raw[field];
  if (!Array.isArray(list) || list.length === 0) {
    problems.push({ field: [field], message: `must list the ${what}s to weight (at least one name)` });
    return [];
  }
  const names: Array<{ name: string; index: number }> = [];
  list.forEach((name: unknown, index) => {
    if (typeof name !== 'string' || name === '')
      problems.push({ field: [field, index], message: `must name a ${what}` });
    else if (names.some((seen) => seen.name === name))
      problems.push({ field: [field, index], message: `"${name}" is listed twice` });
    else names.push({ name, index });
  });
  return names;
}

function readNamespace(raw: Record<string, unknown>, problems: ConfigProblem[]): string | undefined {
  const namespace = raw['namespace'];
  if (namespace === undefined) return undefined;
  if (typeof namespace === 'string' && namespace !== '') return namespace;
  problems.push({ field: ['namespace'], message: 'must be a namespace name' });
  return undefined;
}

/** Reads the Contour plugin's block: a non-empty list of HTTPProxy names, none twice. */
export function readContourPluginConfig(raw: unknown): ContourPluginConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const problems: ConfigProblem[] = [];
  const httpProxies = readNames(raw, 'httpProxies', 'HTTPProxy', problems).map(({ name }) => name);
  const namespace = readNamespace(raw, problems);
  if (problems.length > 0) return problems;
  return { httpProxies, ...(namespace !== undefined ? { namespace } : {}) };
}

/** Reads the OpenShift plugin's block: a non-empty list of Route names (`name` or `namespace/name`), none twice. */
export function readOpenShiftPluginConfig(raw: unknown): OpenShiftPluginConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const problems: ConfigProblem[] = [];
  const routes: OpenShiftRouteRef[] = [];
  readNames(raw, 'routes', 'Route', problems).forEach(({ name: entry, index }) => {
    const parts = entry.split('/');
    if (parts.length === 1) routes.push({ name: entry });
    else if (parts.length === 2 && parts[0] !== '' && parts[1] !== '')
      routes.push({ namespace: parts[0]!, name: parts[1]! });
    else problems.push({ field: ['routes', index], message: 'must be a Route name or namespace/name' });
  });
  const namespace = readNamespace(raw, problems);
  if (problems.length > 0) return problems;
  return { routes, ...(namespace !== undefined ? { namespace } : {}) };
}
