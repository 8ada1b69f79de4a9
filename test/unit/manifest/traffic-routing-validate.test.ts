// validate on trafficRouting: the driven routers (Gateway API, SMI) accepted, their fields checked at the right line.
import { describe, expect, it } from 'vitest';
import { validateManifests } from '../../../src/manifest/validate.ts';
import { unsupportedTrafficRouters } from '../../../src/manifest/unsupported-fields.ts';
import { ROLLOUT_YAML } from '../../builders/rollout-manifest.ts';

// ROLLOUT_YAML's canary block ends with its steps: routing lines are appended under `canary:` (line 24 on).
function withCanary(lines: string): string {
  return ROLLOUT_YAML.replace('    canary:\n', `    canary:\n${lines}`);
}

function errorsOf(text: string): string[] {
  const report = validateManifests([{ file: 'rollout.yaml', text }]);
  return report.objects.flatMap((o) => o.errors.map((e) => `${e.line} ${e.path}: ${e.message}`));
}

const SERVICES = '      canaryService: web-canary\n      stableService: web-stable\n';

describe('validate: trafficRouting', () => {
  it.each([
    [
      'the gatewayAPI plugin block',
      '        plugins:\n          argoproj-labs/gatewayAPI:\n            httpRoute: web\n',
    ],
    [
      'the native gatewayAPI block',
      '        gatewayAPI:\n          httpRoutes:\n            - name: web\n              useHeaderRoutes: true\n',
    ],
    ['smi', '        smi:\n          rootService: web\n          trafficSplitName: web-split\n'],
  ])('accepts %s with both services', (_name, block) => {
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${block}`))).toEqual([]);
  });

  it('requires canaryService and stableService with a driven router', () => {
    const text = withCanary('      trafficRouting:\n        smi: {}\n');
    expect(errorsOf(text)).toEqual([
      '23 spec.strategy.canary.canaryService: required with trafficRouting.smi (the router weights this Service)',
      '23 spec.strategy.canary.stableService: required with trafficRouting.smi (the router weights this Service)',
    ]);
  });

  it('refuses canaryService = stableService', () => {
    const text = withCanary(
      '      canaryService: web\n      stableService: web\n      trafficRouting:\n        smi: {}\n',
    );
    expect(errorsOf(text)).toEqual([
      '24 spec.strategy.canary.canaryService: must differ from stableService (both are "web")',
    ]);
  });

  it('names a Gateway API block without a route, or a route without a name, at its line', () => {
    expect(
      errorsOf(
        withCanary(`${SERVICES}      trafficRouting:\n        gatewayAPI:\n          namespace: edge\n`),
      ),
    ).toEqual([
      '27 spec.strategy.canary.trafficRouting.gatewayAPI: names no route: set httpRoute, httpRoutes, grpcRoute or tcpRoute',
    ]);
    const unnamed = `${SERVICES}      trafficRouting:\n        plugins:\n          argoproj-labs/gatewayAPI:\n            httpRoutes:\n              - useHeaderRoutes: true\n`;
    expect(errorsOf(withCanary(unnamed))).toEqual([
      '30 spec.strategy.canary.trafficRouting.plugins["argoproj-labs/gatewayAPI"].httpRoutes[0].name: must name a HTTPRoute',
    ]);
  });

  it('refuses both the native block and the plugin block', () => {
    const both = `${SERVICES}      trafficRouting:\n        gatewayAPI:\n          httpRoute: web\n        plugins:\n          argoproj-labs/gatewayAPI:\n            httpRoute: web\n`;
    expect(errorsOf(withCanary(both))).toEqual([
      '30 spec.strategy.canary.trafficRouting.plugins["argoproj-labs/gatewayAPI"]: set only one of trafficRouting.gatewayAPI and trafficRouting.plugins["argoproj-labs/gatewayAPI"] (the same router)',
    ]);
  });

  it('keeps other routers, other plugins and Gateway API fields it does not drive unsupported', () => {
    const text = withCanary(
      `${SERVICES}      trafficRouting:\n        plugins:\n          acme/router: {}\n          argoproj-labs/gatewayAPI:\n            httpRoute: web\n            tlsRoute: web-tls\n`,
    );
    expect(errorsOf(text)).toEqual([
      '28 spec.strategy.canary.trafficRouting.plugins["acme/router"]: unsupported: strategy.canary.trafficRouting.plugins["acme/router"] (Rollgate runs no router plugins; it drives argoproj-labs/gatewayAPI, argoproj-labs/contour, argoproj-labs/openshift itself)',
      '31 spec.strategy.canary.trafficRouting.plugins["argoproj-labs/gatewayAPI"].tlsRoute: unsupported: strategy.canary.trafficRouting.plugins["argoproj-labs/gatewayAPI"].tlsRoute (Rollgate drives the HTTPRoutes, GRPCRoutes and TCPRoutes named in the block)',
    ]);
  });

  it('bounds setWeight by maxTrafficWeight (100 unless set), at the step line', () => {
    expect(errorsOf(ROLLOUT_YAML.replace('setWeight: 60', 'setWeight: 150'))).toEqual([
      '27 spec.strategy.canary.steps[2].setWeight: must be between 0 and 100, got 150',
    ]);
    const scaled = withCanary(
      `${SERVICES}      trafficRouting:\n        maxTrafficWeight: 1000\n        smi: {}\n`,
    );
    expect(errorsOf(scaled.replace('setWeight: 60', 'setWeight: 600'))).toEqual([]);
    expect(errorsOf(scaled.replace('setWeight: 60', 'setWeight: 1200'))).toEqual([
      '32 spec.strategy.canary.steps[2].setWeight: must be between 0 and 1000 (trafficRouting.maxTrafficWeight), got 1200',
    ]);
  });

  it('accepts Istio subsets without canaryService/stableService; host-level Istio needs both', () => {
    const subsets =
      '      trafficRouting:\n        istio:\n          virtualService:\n            name: web\n          destinationRule:\n            name: web\n            canarySubsetName: canary\n            stableSubsetName: stable\n';
    expect(errorsOf(withCanary(subsets))).toEqual([]);
    const hosts =
      '      trafficRouting:\n        istio:\n          virtualService:\n            name: web\n            routes: [primary]\n';
    expect(errorsOf(withCanary(hosts))).toEqual([
      '23 spec.strategy.canary.canaryService: required with trafficRouting.istio (the router weights this Service)',
      '23 spec.strategy.canary.stableService: required with trafficRouting.istio (the router weights this Service)',
    ]);
    expect(errorsOf(withCanary(`${SERVICES}${hosts}`))).toEqual([]);
  });

  it('names an incomplete Istio block and the Istio fields it does not read', () => {
    const text = withCanary(
      `${SERVICES}      trafficRouting:\n        istio:\n          virtualService:\n            routes: [primary]\n          destinationRule:\n            name: web\n            canarySubsetName: canary\n            stableSubsetName: stable\n            additionalSubsetNames: [v0]\n`,
    );
    expect(errorsOf(text)).toEqual([
      '34 spec.strategy.canary.trafficRouting.istio.destinationRule.additionalSubsetNames: unsupported: strategy.canary.trafficRouting.istio.destinationRule.additionalSubsetNames (Rollgate reads virtualService(s) {name, routes, tlsRoutes, tcpRoutes} and destinationRule {name, canarySubsetName, stableSubsetName})',
      '28 spec.strategy.canary.trafficRouting.istio.virtualService.name: must name a VirtualService',
    ]);
  });

  it('drives header routes with the Gateway API or Istio and mirror routes with Istio; other routers refuse them', () => {
    const routing = (block: string) =>
      `${SERVICES}      trafficRouting:\n        managedRoutes:\n          - name: h\n${block}`;
    const header =
      '        - setHeaderRoute:\n            name: h\n            match:\n              - headerName: x\n                headerValue: {exact: "1"}\n';
    const mirror =
      '        - setMirrorRoute:\n            name: h\n            match:\n              - method: {exact: GET}\n';
    const withStep = (block: string, step: string) =>
      withCanary(routing(block)).replace('      steps:\n', `      steps:\n${step}`);
    const gateway = '        gatewayAPI:\n          httpRoute: web\n';
    const istio = '        istio:\n          virtualService: {name: web}\n';
    expect(errorsOf(withStep(gateway, header))).toEqual([]);
    expect(errorsOf(withStep(istio, header))).toEqual([]);
    expect(errorsOf(withStep(istio, mirror))).toEqual([]);
    expect(errorsOf(withStep(gateway, mirror))).toEqual([
      '32 spec.strategy.canary.steps[0].setMirrorRoute: unsupported: strategy.canary.steps[0].setMirrorRoute (mirror routes need the Istio router)',
    ]);
    expect(errorsOf(withStep('        smi: {}\n', header))).toEqual([
      '31 spec.strategy.canary.steps[0].setHeaderRoute: unsupported: strategy.canary.steps[0].setHeaderRoute (header routes need the Gateway API, Istio, APISIX, Contour or ALB router)',
    ]);
    // Argo's Traefik router ignores header and mirror steps; Rollgate says so instead.
    const traefik = '        traefik:\n          weightedTraefikServiceName: web-wrr\n';
    expect(errorsOf(withStep(traefik, header))).toEqual([
      '32 spec.strategy.canary.steps[0].setHeaderRoute: unsupported: strategy.canary.steps[0].setHeaderRoute (header routes need the Gateway API, Istio, APISIX, Contour or ALB router)',
    ]);
    expect(errorsOf(withStep(traefik, mirror))).toEqual([
      '32 spec.strategy.canary.steps[0].setMirrorRoute: unsupported: strategy.canary.steps[0].setMirrorRoute (mirror routes need the Istio router)',
    ]);
  });

  it.each([
    ['nginx with stableIngress', '        nginx:\n          stableIngress: web\n'],
    [
      'nginx with every field',
      '        nginx:\n          stableIngresses: [web, web-admin]\n          annotationPrefix: custom.nginx.org\n          additionalIngressAnnotations:\n            canary-by-header: X-Canary\n          canaryIngressAnnotations:\n            team.example.com/owner: shop\n',
    ],
  ])('accepts %s with both services', (_name, block) => {
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${block}`))).toEqual([]);
  });

  it.each([
    {
      name: 'neither stableIngress nor stableIngresses',
      block: '        nginx:\n          annotationPrefix: custom.nginx.org\n',
      want: [
        '27 spec.strategy.canary.trafficRouting.nginx: names no Ingress: set stableIngress or stableIngresses',
      ],
    },
    {
      name: 'both stableIngress and stableIngresses',
      block: '        nginx:\n          stableIngress: web\n          stableIngresses: [web-admin]\n',
      want: [
        '29 spec.strategy.canary.trafficRouting.nginx.stableIngresses: set only one of stableIngress and stableIngresses',
      ],
    },
    {
      name: 'a name listed twice',
      block: '        nginx:\n          stableIngresses: [web, web-admin, web]\n',
      want: ['28 spec.strategy.canary.trafficRouting.nginx.stableIngresses[2]: "web" is listed twice'],
    },
    {
      name: 'an empty name, an annotation that is not a string, a field Argo lacks',
      block:
        '        nginx:\n          stableIngresses: [web, ""]\n          additionalIngressAnnotations:\n            canary-by-header: 3\n          stableIngressName: web\n',
      want: [
        '28 spec.strategy.canary.trafficRouting.nginx.stableIngresses[1]: must name an Ingress',
        '30 spec.strategy.canary.trafficRouting.nginx.additionalIngressAnnotations.canary-by-header: must be a string (quote numbers and booleans)',
        '31 spec.strategy.canary.trafficRouting.nginx.stableIngressName: unsupported: strategy.canary.trafficRouting.nginx.stableIngressName (Rollgate reads stableIngress, stableIngresses, annotationPrefix, additionalIngressAnnotations, canaryIngressAnnotations)',
      ],
    },
  ])('refuses an nginx block with $name, at its line', ({ block, want }) => {
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${block}`)).sort()).toEqual(want.sort());
  });

  it('requires canaryService and stableService with nginx', () => {
    expect(
      errorsOf(withCanary('      trafficRouting:\n        nginx:\n          stableIngress: web\n')),
    ).toEqual([
      '23 spec.strategy.canary.canaryService: required with trafficRouting.nginx (the router weights this Service)',
      '23 spec.strategy.canary.stableService: required with trafficRouting.nginx (the router weights this Service)',
    ]);
  });

  it('accepts traefik naming its weighted TraefikService', () => {
    const block = '        traefik:\n          weightedTraefikServiceName: web-wrr\n';
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${block}`))).toEqual([]);
  });

  it.each([
    {
      name: 'no TraefikService name',
      block: '        traefik: {}\n',
      want: [
        '27 spec.strategy.canary.trafficRouting.traefik.weightedTraefikServiceName: required: the weighted TraefikService to edit',
      ],
    },
    {
      name: 'a name that is not a string, a field Argo lacks',
      block:
        '        traefik:\n          weightedTraefikServiceName: 3\n          mirrorTraefikServiceName: web-mirror\n',
      want: [
        '28 spec.strategy.canary.trafficRouting.traefik.weightedTraefikServiceName: must name a TraefikService (a non-empty string)',
        '29 spec.strategy.canary.trafficRouting.traefik.mirrorTraefikServiceName: unsupported: strategy.canary.trafficRouting.traefik.mirrorTraefikServiceName (Rollgate reads weightedTraefikServiceName)',
      ],
    },
  ])('refuses a traefik block with $name, at its line', ({ block, want }) => {
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${block}`)).sort()).toEqual(want.sort());
  });

  it('accepts ambassador listing its Mappings', () => {
    const block = '        ambassador:\n          mappings: [web, web-grpc]\n';
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${block}`))).toEqual([]);
  });

  it.each([
    {
      name: 'no Mapping listed',
      block: '        ambassador: {}\n',
      want: [
        '27 spec.strategy.canary.trafficRouting.ambassador.mappings: must list the Mappings to split (at least one name)',
      ],
    },
    {
      name: 'a Mapping twice, an empty name, a field Argo lacks',
      block: '        ambassador:\n          mappings: [web, "", web]\n          mapping: web\n',
      want: [
        '28 spec.strategy.canary.trafficRouting.ambassador.mappings[1]: must name a Mapping',
        '28 spec.strategy.canary.trafficRouting.ambassador.mappings[2]: "web" is listed twice',
        '29 spec.strategy.canary.trafficRouting.ambassador.mapping: unsupported: strategy.canary.trafficRouting.ambassador.mapping (Rollgate reads mappings)',
      ],
    },
  ])('refuses an ambassador block with $name, at its line', ({ block, want }) => {
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${block}`)).sort()).toEqual(want.sort());
  });

  it('requires canaryService and stableService with traefik', () => {
    expect(
      errorsOf(
        withCanary('      trafficRouting:\n        traefik:\n          weightedTraefikServiceName: w\n'),
      ),
    ).toEqual([
      '23 spec.strategy.canary.canaryService: required with trafficRouting.traefik (the router weights this Service)',
      '23 spec.strategy.canary.stableService: required with trafficRouting.traefik (the router weights this Service)',
    ]);
  });

  it('unsupportedTrafficRouters lists what the planner must refuse', () => {
    expect(unsupportedTrafficRouters({ smi: {}, gatewayAPI: {} })).toEqual([]);
    expect(unsupportedTrafficRouters({ plugins: { 'argoproj-labs/gatewayAPI': {} } })).toEqual([]);
    expect(unsupportedTrafficRouters({ istio: {} })).toEqual([]);
    expect(unsupportedTrafficRouters({ nginx: {} })).toEqual([]);
    expect(unsupportedTrafficRouters({ traefik: {}, ambassador: {} })).toEqual([]);
    expect(unsupportedTrafficRouters({ alb: {}, apisix: {}, appMesh: {} })).toEqual([]);
    expect(unsupportedTrafficRouters({ alb: {}, plugins: { 'acme/router': {} } })).toEqual([
      'plugins["acme/router"]',
    ]);
  });
});

describe('validate: trafficRouting.alb and pingPong', () => {
  const alb = '        alb:\n          ingress: web\n          servicePort: 80\n';

  it('accepts alb with ingress or ingresses, rootService, prefix and stickiness', () => {
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${alb}`))).toEqual([]);
    const full =
      '        alb:\n          ingresses: [web, web-internal]\n          servicePort: 443\n          rootService: web-root\n          annotationPrefix: custom.alb.ingress.kubernetes.io\n          stickinessConfig: {enabled: true, durationSeconds: 3600}\n';
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${full}`))).toEqual([]);
  });

  it('refuses an alb block naming no Ingress, both forms, no servicePort, a bad stickiness or a field it does not read', () => {
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n        alb: {}\n`))).toEqual([
      '27 spec.strategy.canary.trafficRouting.alb: names no Ingress: set ingress or ingresses',
      '27 spec.strategy.canary.trafficRouting.alb.servicePort: required: the port of the target groups',
    ]);
    const bad =
      '        alb:\n          ingress: web\n          ingresses: [web]\n          servicePort: "80"\n          stickinessConfig: {enabled: true, durationSeconds: 0}\n          ingressClass: alb\n';
    expect(errorsOf(withCanary(`${SERVICES}      trafficRouting:\n${bad}`))).toEqual([
      '32 spec.strategy.canary.trafficRouting.alb.ingressClass: unsupported: strategy.canary.trafficRouting.alb.ingressClass (Rollgate reads ingress, ingresses, servicePort, rootService, annotationPrefix, stickinessConfig)',
      '29 spec.strategy.canary.trafficRouting.alb.ingresses: set only one of ingress and ingresses',
      '30 spec.strategy.canary.trafficRouting.alb.servicePort: must be a port number (1-65535)',
      '31 spec.strategy.canary.trafficRouting.alb.stickinessConfig.durationSeconds: must be between 1 and 604800 seconds (7 days), as the AWS API requires',
    ]);
  });

  it('requires canaryService and stableService with alb, unless pingPong names its two Services', () => {
    expect(errorsOf(withCanary(`      trafficRouting:\n${alb}`))).toEqual([
      '23 spec.strategy.canary.canaryService: required with trafficRouting.alb (the router weights this Service)',
      '23 spec.strategy.canary.stableService: required with trafficRouting.alb (the router weights this Service)',
    ]);
    const pingPong = '      pingPong:\n        pingService: web-ping\n        pongService: web-pong\n';
    expect(
      errorsOf(withCanary(`${pingPong}      trafficRouting:\n${alb}          rootService: web-root\n`)),
    ).toEqual([]);
    // Argo's rule: with ALB and ping-pong the action needs a root Service.
    expect(errorsOf(withCanary(`${pingPong}      trafficRouting:\n${alb}`))).toEqual([
      '28 spec.strategy.canary.trafficRouting.alb.rootService: required with pingPong: the Service whose action the ping and pong Services are weighted in',
    ]);
    const same = '      pingPong:\n        pingService: web-ping\n        pongService: web-ping\n';
    expect(
      errorsOf(withCanary(`${same}      trafficRouting:\n${alb}          rootService: web-root\n`)),
    ).toEqual([
      '26 spec.strategy.canary.pingPong.pongService: must differ from pingService (two Services take turns)',
    ]);
  });

  it('refuses pingPong without ALB, or with another router beside it, as unsupported', () => {
    const pingPong = '      pingPong:\n        pingService: web-ping\n        pongService: web-pong\n';
    expect(
      errorsOf(
        withCanary(
          `${pingPong}      trafficRouting:\n        istio:\n          virtualService: {name: web}\n`,
        ),
      ),
    ).toEqual([
      '24 spec.strategy.canary.pingPong: unsupported: strategy.canary.pingPong (Rollgate drives ping-pong Services with the ALB router alone)',
    ]);
    expect(errorsOf(withCanary(`${pingPong}`))).toEqual([
      '24 spec.strategy.canary.pingPong: unsupported: strategy.canary.pingPong (Rollgate drives ping-pong Services with the ALB router alone)',
    ]);
  });

  it('drives header routes with alb, but not a regex, and no mirror routes', () => {
    const header =
      '        - setHeaderRoute:\n            name: h\n            match:\n              - headerName: x\n                headerValue: {exact: "1"}\n              - headerName: y\n                headerValue: {regex: "a.*"}\n';
    const mirror =
      '        - setMirrorRoute:\n            name: h\n            match:\n              - method: {exact: GET}\n';
    const text = withCanary(
      `${SERVICES}      trafficRouting:\n        managedRoutes:\n          - name: h\n${alb}`,
    ).replace('      steps:\n', `      steps:\n${header}${mirror}`);
    expect(errorsOf(text)).toEqual([
      '39 spec.strategy.canary.steps[0].setHeaderRoute.match[1].headerValue.regex: unsupported: strategy.canary.steps[0].setHeaderRoute.match[1].headerValue.regex (an ALB header condition matches exact values and prefixes (as value*) only)',
      '40 spec.strategy.canary.steps[1].setMirrorRoute: unsupported: strategy.canary.steps[1].setMirrorRoute (mirror routes need the Istio router)',
    ]);
  });
});

describe('validate: trafficRouting.apisix and trafficRouting.appMesh', () => {
  const routing = (block: string) =>
    withCanary(`${SERVICES}      trafficRouting:\n        managedRoutes:\n          - name: h\n${block}`);
  const withStep = (block: string, step: string) =>
    routing(block).replace('      steps:\n', `      steps:\n${step}`);
  const header =
    '        - setHeaderRoute:\n            name: h\n            match:\n              - headerName: x\n                headerValue: {exact: "1"}\n';
  const mirror =
    '        - setMirrorRoute:\n            name: h\n            match:\n              - method: {exact: GET}\n';
  const apisix =
    '        apisix:\n          route:\n            name: web\n            rules: [web, web-api]\n';
  const appMesh =
    '        appMesh:\n          virtualService:\n            name: web\n            routes: [primary]\n          virtualNodeGroup:\n            canaryVirtualNodeRef: {name: web-canary}\n            stableVirtualNodeRef: {name: web-stable}\n';

  it('accepts both blocks as Argo writes them, header routes with APISIX', () => {
    expect(errorsOf(routing(apisix))).toEqual([]);
    expect(errorsOf(routing(appMesh))).toEqual([]);
    expect(errorsOf(withStep(apisix, header))).toEqual([]);
  });

  it('refuses mirror routes with APISIX and header or mirror routes with App Mesh (Argo ignores those steps)', () => {
    expect(errorsOf(withStep(apisix, mirror))).toEqual([
      '34 spec.strategy.canary.steps[0].setMirrorRoute: unsupported: strategy.canary.steps[0].setMirrorRoute (mirror routes need the Istio router)',
    ]);
    expect(errorsOf(withStep(appMesh, header))).toEqual([
      '37 spec.strategy.canary.steps[0].setHeaderRoute: unsupported: strategy.canary.steps[0].setHeaderRoute (header routes need the Gateway API, Istio, APISIX, Contour or ALB router)',
    ]);
  });

  it('names what is missing, at its line', () => {
    expect(errorsOf(routing('        apisix:\n          route:\n            rules: [web, web]\n'))).toEqual([
      '30 spec.strategy.canary.trafficRouting.apisix.route.name: must name the ApisixRoute (a non-empty string)',
    ]);
    expect(
      errorsOf(
        routing('        apisix:\n          route:\n            name: web\n            rules: [web, web]\n'),
      ),
    ).toEqual(['32 spec.strategy.canary.trafficRouting.apisix.route.rules[1]: "web" is listed twice']);
    expect(
      errorsOf(
        routing(
          '        appMesh:\n          virtualNodeGroup:\n            canaryVirtualNodeRef: {name: vn}\n            stableVirtualNodeRef: {name: vn}\n',
        ),
      ),
    ).toEqual([
      '29 spec.strategy.canary.trafficRouting.appMesh.virtualService: required: an object naming the VirtualService',
    ]);
    expect(errorsOf(routing('        appMesh:\n          virtualService: {name: web}\n'))).toEqual([
      '29 spec.strategy.canary.trafficRouting.appMesh.virtualNodeGroup: required: the canary and stable VirtualNodes',
    ]);
  });

  it('refuses fields Argo blocks do not have, at any depth', () => {
    const text = routing(
      '        apisix:\n          route:\n            name: web\n            weight: 5\n          stickiness: true\n',
    );
    expect(errorsOf(text)).toEqual([
      '32 spec.strategy.canary.trafficRouting.apisix.route.weight: unsupported: strategy.canary.trafficRouting.apisix.route.weight (Rollgate reads route {name, rules})',
      '33 spec.strategy.canary.trafficRouting.apisix.stickiness: unsupported: strategy.canary.trafficRouting.apisix.stickiness (Rollgate reads route {name, rules})',
    ]);
    const mesh = routing(appMesh.replace('{name: web-canary}', '{name: web-canary, namespace: other}'));
    expect(errorsOf(mesh)).toEqual([
      '34 spec.strategy.canary.trafficRouting.appMesh.virtualNodeGroup.canaryVirtualNodeRef.namespace: unsupported: strategy.canary.trafficRouting.appMesh.virtualNodeGroup.canaryVirtualNodeRef.namespace (Rollgate reads virtualService {name, routes} and virtualNodeGroup {canaryVirtualNodeRef, stableVirtualNodeRef} {name})',
    ]);
  });
});
