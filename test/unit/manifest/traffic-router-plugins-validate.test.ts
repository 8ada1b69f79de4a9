// validate on the Contour and OpenShift router plugins' blocks: accepted as their READMEs write them, their fields checked at the right line.
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
const plugin = (name: string, body: string) =>
  `${SERVICES}      trafficRouting:\n        plugins:\n          ${name}:\n${body}`;
const CONTOUR = 'argoproj-labs/contour';
const OPENSHIFT = 'argoproj-labs/openshift';
const at = (name: string, field: string) => `spec.strategy.canary.trafficRouting.plugins["${name}"]${field}`;

describe('validate: the Contour and OpenShift plugin blocks', () => {
  it.each([
    [
      'the Contour block as its README writes it',
      plugin(CONTOUR, '            httpProxies:\n              - web\n'),
    ],
    [
      'the Contour block of its early README, with namespace',
      plugin(CONTOUR, '            httpProxies: [web, web-internal]\n            namespace: apps\n'),
    ],
    [
      'the OpenShift block as its README writes it, namespace included',
      plugin(OPENSHIFT, '            routes:\n              - web\n            namespace: apps\n'),
    ],
    ['an OpenShift Route in another namespace', plugin(OPENSHIFT, '            routes: [edge/web]\n')],
  ])('accepts %s', (_name, lines) => {
    expect(errorsOf(withCanary(lines))).toEqual([]);
  });

  it.each([
    {
      name: 'Contour without httpProxies',
      lines: plugin(CONTOUR, '            namespace: shop\n'),
      want: [`28 ${at(CONTOUR, '')}.httpProxies: must list the HTTPProxys to weight (at least one name)`],
    },
    {
      name: 'Contour with the first release’s httpProxy, a name twice',
      lines: plugin(CONTOUR, '            httpProxy: web\n            httpProxies: [web, web]\n'),
      want: [
        `29 ${at(CONTOUR, '')}.httpProxy: unsupported: strategy.canary.trafficRouting.plugins["${CONTOUR}"].httpProxy (Rollgate reads httpProxies, namespace (${CONTOUR}) and routes, namespace (${OPENSHIFT}))`,
        `30 ${at(CONTOUR, '')}.httpProxies[1]: "web" is listed twice`,
      ],
    },
    {
      name: 'OpenShift with an empty name and a malformed one',
      lines: plugin(OPENSHIFT, '            routes: ["", a/b/c]\n'),
      want: [
        `29 ${at(OPENSHIFT, '')}.routes[0]: must name a Route`,
        `29 ${at(OPENSHIFT, '')}.routes[1]: must be a Route name or namespace/name`,
      ],
    },
  ])('refuses $name, at its line', ({ lines, want }) => {
    expect(errorsOf(withCanary(lines)).sort()).toEqual(want.sort());
  });

  it('refuses a namespace that is not the rollout’s (the plugin would edit the rollout’s anyway)', () => {
    expect(
      errorsOf(withCanary(plugin(CONTOUR, '            httpProxies: [web]\n            namespace: shop\n'))),
    ).toEqual([
      `30 ${at(CONTOUR, '')}.namespace: "shop" is not the rollout's namespace "apps" (the plugin edits the rollout's)`,
    ]);
  });

  it('requires canaryService and stableService', () => {
    const block =
      '      trafficRouting:\n        plugins:\n          argoproj-labs/openshift:\n            routes: [web]\n';
    expect(errorsOf(withCanary(block))).toEqual([
      `23 spec.strategy.canary.canaryService: required with trafficRouting.plugins["${OPENSHIFT}"] (the router weights this Service)`,
      `23 spec.strategy.canary.stableService: required with trafficRouting.plugins["${OPENSHIFT}"] (the router weights this Service)`,
    ]);
  });

  it('drives header routes with Contour; mirror routes, and any managed route with OpenShift, are refused', () => {
    const routing = (name: string, body: string) =>
      `${SERVICES}      trafficRouting:\n        managedRoutes:\n          - name: h\n        plugins:\n          ${name}:\n${body}`;
    const header =
      '        - setHeaderRoute:\n            name: h\n            match:\n              - headerName: x\n                headerValue: {exact: "1"}\n';
    const mirror =
      '        - setMirrorRoute:\n            name: h\n            match:\n              - method: {exact: GET}\n';
    const withStep = (lines: string, step: string) =>
      withCanary(lines).replace('      steps:\n', `      steps:\n${step}`);
    const contour = routing(CONTOUR, '            httpProxies: [web]\n');
    const openshift = routing(OPENSHIFT, '            routes: [web]\n');
    expect(errorsOf(withStep(contour, header))).toEqual([]);
    expect(errorsOf(withStep(contour, mirror))).toEqual([
      '33 spec.strategy.canary.steps[0].setMirrorRoute: unsupported: strategy.canary.steps[0].setMirrorRoute (mirror routes need the Istio router)',
    ]);
    expect(errorsOf(withStep(openshift, header))).toEqual([
      '33 spec.strategy.canary.steps[0].setHeaderRoute: unsupported: strategy.canary.steps[0].setHeaderRoute (header routes need the Gateway API, Istio, APISIX, Contour or ALB router)',
    ]);
  });

  it('unsupportedTrafficRouters lets the planner drive both plugins', () => {
    expect(unsupportedTrafficRouters({ plugins: { [CONTOUR]: {}, [OPENSHIFT]: {} } })).toEqual([]);
  });
});
