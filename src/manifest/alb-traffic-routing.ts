// `trafficRouting.alb` (the AWS Load Balancer Controller's Ingress annotations) and `canary.pingPong` as Rollgate reads them.
import type { ConfigProblem } from './traffic-routing.ts';

/** The annotation prefix of the AWS Load Balancer Controller, unless `annotationPrefix` says otherwise. */
export const ALB_DEFAULT_ANNOTATION_PREFIX = 'alb.ingress.kubernetes.io';

/** Fields of `trafficRouting.alb` Rollgate reads (all of Argo's). */
export const ALB_FIELDS = [
  'ingress',
  'ingresses',
  'servicePort',
  'rootService',
  'annotationPrefix',
  'stickinessConfig',
] as const;

/** The range the AWS API accepts for a target group's stickiness duration (1 s to 7 days). */
export const ALB_STICKINESS_MAX_SECONDS = 604_800;

/** `trafficRouting.alb` as Rollgate reads it. */
export interface AlbConfig {
  /** The Ingresses whose action annotation is weighted (`ingress` is a list of one). */
  ingresses: string[];
  /** The port of the target groups (`ServicePort` of each). */
  servicePort: number;
  /** The Service (and action) the Ingress routes to; stableService when unset (pingPong: required). */
  rootService?: string | undefined;
  /** {@link ALB_DEFAULT_ANNOTATION_PREFIX} when unset. */
  annotationPrefix: string;
  /** Target group stickiness, written into the forward config when enabled. */
  stickiness?: { durationSeconds: number } | undefined;
}

/** `canary.pingPong`: two Services that swap the stable and canary roles at each promotion. */
export interface PingPongConfig {
  pingService: string;
  pongService: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isName = (value: unknown): value is string => typeof value === 'string' && value !== '';

/**
 * Reads `trafficRouting.alb`: exactly one of `ingress` and `ingresses` (names not repeated), `servicePort`
 * a port number (Argo requires it), `stickinessConfig.durationSeconds` in the AWS range when enabled.
 */
export function readAlbConfig(raw: unknown): AlbConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const problems: ConfigProblem[] = [];
  const single = raw['ingress'];
  const many = raw['ingresses'];
  const ingresses: string[] = [];
  const both = single !== undefined && single !== '' && many !== undefined;
  if (both) problems.push({ field: ['ingresses'], message: 'set only one of ingress and ingresses' });
  else if ((single === undefined || single === '') && many === undefined)
    problems.push({ field: [], message: 'names no Ingress: set ingress or ingresses' });
  if (single !== undefined && single !== '') {
    if (isName(single)) ingresses.push(single);
    else problems.push({ field: ['ingress'], message: 'must name an Ingress' });
  }
  if (many !== undefined && !both) {
    if (!Array.isArray(many) || many.length === 0)
      problems.push({ field: ['ingresses'], message: 'must list Ingress names (at least one)' });
    else
      many.forEach((name: unknown, index) => {
        if (!isName(name)) problems.push({ field: ['ingresses', index], message: 'must name an Ingress' });
        else if (ingresses.includes(name))
          problems.push({ field: ['ingresses', index], message: `"${name}" is listed twice` });
        else ingresses.push(name);
      });
  }
  const port = raw['servicePort'];
  if (port === undefined)
    problems.push({ field: ['servicePort'], message: 'required: the port of the target groups' });
  else if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65_535)
    problems.push({ field: ['servicePort'], message: 'must be a port number (1-65535)' });
  const rootService = raw['rootService'];
  if (rootService !== undefined && rootService !== '' && !isName(rootService))
    problems.push({ field: ['rootService'], message: 'must name a Service' });
  const prefix = raw['annotationPrefix'];
  if (prefix !== undefined && prefix !== '' && !isName(prefix))
    problems.push({ field: ['annotationPrefix'], message: 'must be an annotation prefix' });
  let stickiness: AlbConfig['stickiness'];
  const sticky = raw['stickinessConfig'];
  if (sticky !== undefined) {
    if (!isRecord(sticky)) problems.push({ field: ['stickinessConfig'], message: 'must be an object' });
    else if (sticky['enabled'] !== undefined && typeof sticky['enabled'] !== 'boolean')
      problems.push({ field: ['stickinessConfig', 'enabled'], message: 'must be true or false' });
    else if (sticky['enabled'] === true) {
      const seconds = sticky['durationSeconds'];
      if (
        typeof seconds !== 'number' ||
        !Number.isInteger(seconds) ||
        seconds < 1 ||
        seconds > ALB_STICKINESS_MAX_SECONDS
      )
        problems.push({
          field: ['stickinessConfig', 'durationSeconds'],
          message: `must be between 1 and ${ALB_STICKINESS_MAX_SECONDS} seconds (7 days), as the AWS API requires`,
        });
      else stickiness = { durationSeconds: seconds };
    }
  }
  if (problems.length > 0) return problems;
  return {
    ingresses,
    servicePort: port as number,
    ...(isName(rootService) ? { rootService } : {}),
    annotationPrefix: isName(prefix) ? prefix : ALB_DEFAULT_ANNOTATION_PREFIX,
    ...(stickiness !== undefined ? { stickiness } : {}),
  };
}

/** Reads `canary.pingPong`: both Services named, and not the same one (as Argo requires). */
export function readPingPongConfig(raw: unknown): PingPongConfig | ConfigProblem[] {
  if (!isRecord(raw)) return [{ field: [], message: 'must be an object' }];
  const problems: ConfigProblem[] = [];
  for (const field of ['pingService', 'pongService'] as const)
    if (!isName(raw[field]))
      problems.push({
        field: [field],
        message: 'required: ping-pong needs both the ping and the pong Service',
      });
  if (problems.length > 0) return problems;
  const pingService = raw['pingService'] as string;
  const pongService = raw['pongService'] as string;
  if (pingService === pongService)
    return [{ field: ['pongService'], message: 'must differ from pingService (two Services take turns)' }];
  return { pingService, pongService };
}

/** The Services in their roles of the moment: which of ping and pong is stable, which the canary. */
export interface PingPongRoles {
  stableService: string;
  canaryService: string;
}

/**
 * The roles `status.canary.stablePingPong` records: `ping` makes the ping Service stable and the pong
 * Service the canary; `pong` or nothing the other way round (as Argo reads an empty value).
 */
export function pingPongRoles(config: PingPongConfig, stablePingPong: string | undefined): PingPongRoles {
  return stablePingPong === 'ping'
    ? { stableService: config.pingService, canaryService: config.pongService }
    : { stableService: config.pongService, canaryService: config.pingService };
}

/**
 * The status.canary.stablePingPong after a pass whose stable hash is `nextStableHash`: it swaps (to
 * `ping` from `pong` or nothing, else to `pong`) whenever the stable hash changes, the first revision
 * included, so the Service that carried the canary carries the new stable; otherwise it stays as read.
 */
export function nextStablePingPong(
  stablePingPong: string | undefined,
  liveStableHash: string | undefined,
  nextStableHash: string,
): string | undefined {
  if (nextStableHash === (liveStableHash ?? '')) return stablePingPong;
  return stablePingPong === 'ping' ? 'pong' : 'ping';
}
