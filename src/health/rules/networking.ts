// Health rules for Service and Ingress: an address from the load balancer is what they wait for.
import { recordsAt, stringAt } from '../live-fields.ts';
import type { HealthRule, LiveObject } from '../object-health.ts';

function hasLoadBalancerAddress(live: LiveObject): boolean {
  return recordsAt(live, 'status', 'loadBalancer', 'ingress').length > 0;
}

/** A LoadBalancer Service waits for its address; every other type is healthy once applied. */
export const serviceHealth: HealthRule = (live) => {
  if (stringAt(live, 'spec', 'type') !== 'LoadBalancer') return { status: 'Healthy', message: '' };
  return hasLoadBalancerAddress(live)
    ? { status: 'Healthy', message: '' }
    : { status: 'Progressing', message: 'waiting for a load balancer address' };
};

/** An Ingress is healthy once its controller published an address. */
export const ingressHealth: HealthRule = (live) =>
  hasLoadBalancerAddress(live)
    ? { status: 'Healthy', message: '' }
    : { status: 'Progressing', message: 'waiting for the ingress controller to publish an address' };

export const NETWORKING_RULES: ReadonlyArray<readonly [string, HealthRule]> = [
  ['/Service', serviceHealth],
  ['networking.k8s.io/Ingress', ingressHealth],
  ['extensions/Ingress', ingressHealth],
];
