// Checks of strategy.canary.trafficRouting for the routers Rollgate drives: routes named, services set, one block each.
import type { FieldPath } from './field-path.ts';
import type { CanaryStrategy } from './rollout.ts';
import {
  gatewayApiBlockOf,
  readGatewayApiConfig,
  readIstioConfig,
  readNginxConfig,
  readSmiConfig,
  readTraefikConfig,
  readAmbassadorConfig,
  readApisixConfig,
  readAppMeshConfig,
} from './traffic-routing.ts';
import { readAlbConfig, readPingPongConfig } from './alb-traffic-routing.ts';
import type { IssueCollector } from './validation-issue.ts';
import {
  CONTOUR_PLUGIN,
  OPENSHIFT_PLUGIN,
  readContourPluginConfig,
  readOpenShiftPluginConfig,
} from './traffic-router-plugins.ts';

/**
 * Reports what would make a driven router fail at run time, with the field at fault: a Gateway API
 * block naming no route (or naming one wrongly), both the native block and the plugin's, an SMI name
 * that is not a string, an Istio block naming no VirtualService or an incomplete DestinationRule, and
 * canaryService/stableService missing where the router weights these two Services (all but Istio
 * with a DestinationRule, which weights its subsets), an NGINX block naming no stable Ingress or
 * both stableIngress and stableIngresses, a Traefik block without its TraefikService's name, an Ambassador block
 * listing no Mapping (or one twice), an APISIX block naming no ApisixRoute, an App Mesh block without its
 * VirtualService or either VirtualNode, a Contour or OpenShift plugin block listing no HTTPProxy or Route,
 * an ALB block naming no Ingress (or both forms) or no servicePort, and canary.pingPong without both
 * Services (with ALB: without rootService).
 */
export function checkTrafficRouting(
  canary: CanaryStrategy,
  sink: IssueCollector,
  /** The rollout's namespace when the manifest names one (a plugin's `namespace` must be it). */
  namespace?: string,
): void {
  const routing = canary.trafficRouting;
  if (routing === undefined) return;
  const at = (...rest: FieldPath): FieldPath => ['spec', 'strategy', 'canary', ...rest];
  const driven: string[] = [];
  const gateway = gatewayApiBlockOf(routing);
  if (gateway.length > 1)
    sink.error(
      at('trafficRouting', ...gateway[1]!.path),
      `set only one of trafficRouting.gatewayAPI and trafficRouting.${gateway[1]!.printed} (the same router)`,
    );
  for (const block of gateway) {
    driven.push(block.printed);
    const read = readGatewayApiConfig(block.raw);
    if (Array.isArray(read))
      for (const problem of read)
        sink.error(at('trafficRouting', ...block.path, ...problem.field), problem.message);
  }
  if (routing.smi !== undefined) {
    driven.push('smi');
    const read = readSmiConfig(routing.smi);
    if (Array.isArray(read))
      for (const problem of read) sink.error(at('trafficRouting', 'smi', ...problem.field), problem.message);
  }
  if (routing.istio !== undefined) {
    const read = readIstioConfig(routing.istio);
    if (Array.isArray(read))
      for (const problem of read)
        sink.error(at('trafficRouting', 'istio', ...problem.field), problem.message);
    // With a DestinationRule Istio weights subsets, not Services (Argo's subset-level split).
    else if (read.destinationRule === undefined) driven.push('istio');
  }
  if (routing.nginx !== undefined) {
    driven.push('nginx');
    const read = readNginxConfig(routing.nginx);
    if (Array.isArray(read))
      for (const problem of read)
        sink.error(at('trafficRouting', 'nginx', ...problem.field), problem.message);
  }
  if (routing.traefik !== undefined) {
    driven.push('traefik');
    const read = readTraefikConfig(routing.traefik);
    if (Array.isArray(read))
      for (const problem of read)
        sink.error(at('trafficRouting', 'traefik', ...problem.field), problem.message);
  }
  if (routing.ambassador !== undefined) {
    driven.push('ambassador');
    const read = readAmbassadorConfig(routing.ambassador);
    if (Array.isArray(read))
      for (const problem of read)
        sink.error(at('trafficRouting', 'ambassador', ...problem.field), problem.message);
  }
  for (const [field, read] of [
    ['apisix', readApisixConfig],
    ['appMesh', readAppMeshConfig],
  ] as const) {
    if (routing[field] === undefined) continue;
    driven.push(field);
    const found = read(routing[field]);
    if (Array.isArray(found))
      for (const problem of found) sink.error(at('trafficRouting', field, ...problem.field), problem.message);
  }
  for (const [plugin, read] of [
    [CONTOUR_PLUGIN, readContourPluginConfig],
    [OPENSHIFT_PLUGIN, readOpenShiftPluginConfig],
  ] as const) {
    const block = isRecord(routing.plugins) ? routing.plugins[plugin] : undefined;
    if (block === undefined) continue;
    driven.push(`plugins["${plugin}"]`);
    const config = read(block);
    if (Array.isArray(config))
      for (const problem of config)
        sink.error(at('trafficRouting', 'plugins', plugin, ...problem.field), problem.message);
    // The plugins act in the rollout's namespace whatever `namespace` says: another one is a mistake.
    else if (namespace !== undefined && config.namespace !== undefined && config.namespace !== namespace)
      sink.error(
        at('trafficRouting', 'plugins', plugin, 'namespace'),
        `"${config.namespace}" is not the rollout's namespace "${namespace}" (the plugin edits the rollout's)`,
      );
  }
  if (routing.alb !== undefined) {
    const read = readAlbConfig(routing.alb);
    if (Array.isArray(read))
      for (const problem of read) sink.error(at('trafficRouting', 'alb', ...problem.field), problem.message);
    else if (canary.pingPong !== undefined && read.rootService === undefined)
      sink.error(
        at('trafficRouting', 'alb', 'rootService'),
        'required with pingPong: the Service whose action the ping and pong Services are weighted in',
      );
    driven.push('alb');
  }
  if (canary.pingPong !== undefined) {
    const read = readPingPongConfig(canary.pingPong);
    if (Array.isArray(read))
      for (const problem of read) sink.error(at('pingPong', ...problem.field), problem.message);
    // The ping and pong Services are weighted instead (as Argo, canaryService/stableService are optional).
    return;
  }
  if (driven.length === 0) return;
  for (const field of ['canaryService', 'stableService'] as const) {
    if (!canary[field])
      sink.error(at(field), `required with trafficRouting.${driven[0]} (the router weights this Service)`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
