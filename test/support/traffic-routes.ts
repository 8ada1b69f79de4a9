// The route objects a team writes before Rollgate weights them: Istio VirtualServices (by Service or by
// DestinationRule subset) and a Gateway API HTTPRoute, each sending everything to stable.

/**
 * An Istio VirtualService `name` whose route `primary` weights the `web-stable` and `web-canary` Services
 * (100 and 0).
 */
export function istioServiceRoutesYaml(namespace: string, name: string): string {
  return `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  hosts: [web]
  http:
    - name: primary
      route:
        - destination: {host: web-stable}
          weight: 100
        - destination: {host: web-canary}
          weight: 0
`;
}

/**
 * An Istio VirtualService `web` (stable 100, canary 0) and a DestinationRule `web` with `stable` and
 * `canary` subsets, as a team writes them before Rollgate routes through them.
 */
export function istioSubsetRoutesYaml(namespace: string): string {
  return `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: web
  namespace: ${namespace}
spec:
  hosts: [web]
  http:
    - route:
        - destination: {host: web, subset: stable}
          weight: 100
        - destination: {host: web, subset: canary}
          weight: 0
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: web
  namespace: ${namespace}
spec:
  host: web
  subsets:
    - name: stable
      labels: {app: web}
    - name: canary
      labels: {app: web}
`;
}

/** A Gateway API HTTPRoute `web` under the Gateway `parent`, one rule weighting `web-stable` 100 and `web-canary` 0. */
export function gatewayHttpRouteYaml(namespace: string, parent: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: ${namespace}
spec:
  parentRefs: [{name: ${parent}}]
  rules:
    - backendRefs:
        - {name: web-stable, port: 80, weight: 100}
        - {name: web-canary, port: 80, weight: 0}
`;
}
