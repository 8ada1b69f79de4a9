// A kustomize repository whose Rollouts, analysis templates and Experiment name every kind of object Argo's spec lets them name, written from that spec.

/** Generated ConfigMaps and Secrets: one per field that names one, so each field is seen on its own. */
export const GENERATED_CONFIG_MAPS = [
  'cm-volume',
  'cm-projected',
  'cm-env',
  'cm-envfrom',
  'cm-init-env',
  'cm-init-envfrom',
  'cm-eph-env',
  'cm-eph-envfrom',
  'cm-job',
  'cm-experiment',
] as const;
export const GENERATED_SECRETS = [
  'sec-volume',
  'sec-projected',
  'sec-csi',
  'sec-pull',
  'sec-env',
  'sec-envfrom',
  'sec-init-env',
  'sec-init-envfrom',
  'sec-eph-env',
  'sec-eph-envfrom',
  'sec-arg',
] as const;

const generators = (kind: 'configMapGenerator' | 'secretGenerator', names: readonly string[]): string =>
  `${kind}:\n${names.map((name) => `  - name: ${name}\n    literals: [KEY=${name}]`).join('\n')}\n`;

const ROLLOUTS = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: ro-web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      serviceAccountName: sa-web
      priorityClassName: pc-high
      imagePullSecrets: [{name: sec-pull}]
      initContainers:
        - name: init
          image: busybox
          env:
            - {name: A, valueFrom: {configMapKeyRef: {name: cm-init-env, key: KEY}}}
            - {name: B, valueFrom: {secretKeyRef: {name: sec-init-env, key: KEY}}}
          envFrom:
            - configMapRef: {name: cm-init-envfrom}
            - secretRef: {name: sec-init-envfrom}
      containers:
        - name: web
          image: nginx
          env:
            - {name: A, valueFrom: {configMapKeyRef: {name: cm-env, key: KEY}}}
            - {name: B, valueFrom: {secretKeyRef: {name: sec-env, key: KEY}}}
          envFrom:
            - configMapRef: {name: cm-envfrom}
            - secretRef: {name: sec-envfrom}
      ephemeralContainers:
        - name: debug
          image: busybox
          env:
            - {name: A, valueFrom: {configMapKeyRef: {name: cm-eph-env, key: KEY}}}
            - {name: B, valueFrom: {secretKeyRef: {name: sec-eph-env, key: KEY}}}
          envFrom:
            - configMapRef: {name: cm-eph-envfrom}
            - secretRef: {name: sec-eph-envfrom}
      volumes:
        - {name: a, configMap: {name: cm-volume}}
        - {name: b, secret: {secretName: sec-volume}}
        - name: c
          projected:
            sources:
              - configMap: {name: cm-projected}
              - secret: {name: sec-projected}
        - {name: d, persistentVolumeClaim: {claimName: pvc-data}}
        - {name: e, csi: {driver: secrets-store.csi.k8s.io, nodePublishSecretRef: {name: sec-csi}}}
  strategy:
    canary:
      canaryService: svc-canary
      stableService: svc-stable
      trafficRouting:
        nginx:
          stableIngresses: [ing-nginx]
      analysis:
        templates: [{templateName: at-background}]
      steps:
        - setWeight: 20
        - analysis:
            templates:
              - templateName: at-step
              - {templateName: cat-step, clusterScope: true}
        - experiment:
            templates: [{name: canary, specRef: canary}]
            analyses: [{name: check, templateName: at-experiment}]
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: ro-routers
spec:
  selector:
    matchLabels: {app: routers}
  template:
    metadata:
      labels: {app: routers}
    spec:
      containers: [{name: app, image: nginx}]
  strategy:
    canary:
      pingPong: {pingService: svc-ping, pongService: svc-pong}
      # Every router block at once: kustomize does not mind, and one Rollout shows them all.
      trafficRouting:
        nginx: {stableIngress: ing-nginx-single}
        alb: {ingress: ing-alb, ingresses: [ing-alb-extra], rootService: svc-alb-root, servicePort: 80}
        smi: {rootService: svc-smi-root, trafficSplitName: ts-web}
        istio:
          virtualService: {name: vs-single, routes: [primary]}
          virtualServices: [{name: vs-listed, routes: [primary]}]
          destinationRule: {name: dr-web, canarySubsetName: canary, stableSubsetName: stable}
        gatewayAPI: {httpRoute: rt-http}
        plugins:
          argoproj-labs/gatewayAPI:
            httpRoutes: [{name: rt-http-listed, useHeaderRoutes: true}]
            grpcRoute: rt-grpc
            tcpRoutes: [{name: rt-tcp}]
          argoproj-labs/contour: {httpProxies: [hp-web]}
          argoproj-labs/openshift: {routes: [osr-web]}
        ambassador: {mappings: [map-web]}
        appMesh:
          virtualService: {name: am-vs}
          virtualNodeGroup:
            canaryVirtualNodeRef: {name: am-node-canary}
            stableVirtualNodeRef: {name: am-node-stable}
        traefik: {weightedTraefikServiceName: tr-web}
        apisix: {route: {name: ax-web}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: ro-bluegreen
spec:
  selector:
    matchLabels: {app: bluegreen}
  template:
    metadata:
      labels: {app: bluegreen}
    spec:
      containers: [{name: app, image: nginx}]
  strategy:
    blueGreen:
      activeService: svc-active
      previewService: svc-preview
      prePromotionAnalysis: {templates: [{templateName: at-pre}]}
      postPromotionAnalysis: {templates: [{templateName: at-post}]}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: ro-workload
spec:
  selector:
    matchLabels: {app: workload}
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: dep-workload}
  strategy:
    canary:
      steps: [{setWeight: 50}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: hpa-workload
spec:
  scaleTargetRef: {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: ro-workload}
  minReplicas: 1
  maxReplicas: 3
`;

const ANALYSIS = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: at-step
spec:
  args:
    - name: token
      valueFrom: {secretKeyRef: {name: sec-arg, key: KEY}}
  metrics:
    - name: job
      provider:
        job:
          spec:
            template:
              spec:
                restartPolicy: Never
                containers:
                  - name: check
                    image: busybox
                    envFrom: [{configMapRef: {name: cm-job}}]
${['at-background', 'at-experiment', 'at-pre', 'at-post']
  .map(
    (name) => `---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: ${name}
spec:
  metrics: [{name: up, provider: {web: {url: 'http://example.test/'}}, successCondition: 'result == 1'}]
`,
  )
  .join('')}---
apiVersion: argoproj.io/v1alpha1
kind: ClusterAnalysisTemplate
metadata:
  name: cat-step
spec:
  metrics: [{name: up, provider: {web: {url: 'http://example.test/'}}, successCondition: 'result == 1'}]
---
apiVersion: argoproj.io/v1alpha1
kind: Experiment
metadata:
  name: exp-web
spec:
  templates:
    - name: baseline
      selector: {matchLabels: {app: experiment}}
      template:
        metadata: {labels: {app: experiment}}
        spec:
          containers: [{name: app, image: nginx}]
          volumes: [{name: a, configMap: {name: cm-experiment}}]
  analyses: [{name: check, templateName: at-experiment}]
`;

const plain = (apiVersion: string, kind: string, names: readonly string[], spec = ''): string =>
  names
    .map((name) => `---\napiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\n${spec}`)
    .join('');

const SERVICE_SPEC = 'spec:\n  selector: {app: web}\n  ports: [{port: 80}]\n';

const TARGETS = [
  plain(
    'v1',
    'Service',
    [
      'svc-stable',
      'svc-canary',
      'svc-ping',
      'svc-pong',
      'svc-alb-root',
      'svc-smi-root',
      'svc-active',
      'svc-preview',
    ],
    SERVICE_SPEC,
  ),
  plain('v1', 'ServiceAccount', ['sa-web']),
  plain(
    'v1',
    'PersistentVolumeClaim',
    ['pvc-data'],
    'spec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n',
  ),
  plain('scheduling.k8s.io/v1', 'PriorityClass', ['pc-high'], 'value: 1000\n'),
  plain('networking.k8s.io/v1', 'Ingress', ['ing-nginx', 'ing-nginx-single', 'ing-alb', 'ing-alb-extra']),
  plain('networking.istio.io/v1beta1', 'VirtualService', ['vs-single', 'vs-listed']),
  plain('networking.istio.io/v1beta1', 'DestinationRule', ['dr-web']),
  plain('split.smi-spec.io/v1alpha2', 'TrafficSplit', ['ts-web']),
  plain('gateway.networking.k8s.io/v1', 'HTTPRoute', ['rt-http', 'rt-http-listed']),
  plain('gateway.networking.k8s.io/v1', 'GRPCRoute', ['rt-grpc']),
  plain('gateway.networking.k8s.io/v1alpha2', 'TCPRoute', ['rt-tcp']),
  plain('getambassador.io/v2', 'Mapping', ['map-web']),
  plain('appmesh.k8s.aws/v1beta2', 'VirtualService', ['am-vs']),
  plain('appmesh.k8s.aws/v1beta2', 'VirtualNode', ['am-node-canary', 'am-node-stable']),
  plain('traefik.io/v1alpha1', 'TraefikService', ['tr-web']),
  plain('apisix.apache.org/v2', 'ApisixRoute', ['ax-web']),
  plain('projectcontour.io/v1', 'HTTPProxy', ['hp-web']),
  plain('route.openshift.io/v1', 'Route', ['osr-web']),
  plain(
    'apps/v1',
    'Deployment',
    ['dep-workload'],
    'spec:\n  replicas: 0\n  selector: {matchLabels: {app: workload}}\n  template:\n    metadata: {labels: {app: workload}}\n    spec:\n      containers: [{name: app, image: nginx}]\n',
  ),
].join('');

/** The base: every object above, the generators, no prefix or labels of its own. */
export const BASE: Record<string, string> = {
  'base/rollouts.yaml': ROLLOUTS,
  'base/analysis.yaml': ANALYSIS,
  'base/targets.yaml': TARGETS.replace(/^---\n/, ''),
  'base/kustomization.yaml':
    '# The app as every environment shares it.\nresources: [rollouts.yaml, analysis.yaml, targets.yaml]\n' +
    generators('configMapGenerator', GENERATED_CONFIG_MAPS) +
    generators('secretGenerator', GENERATED_SECRETS),
};

/** An overlay as users write one: a prefix and suffix, a namespace, selector labels and images. */
export const STAGING: Record<string, string> = {
  'overlays/staging/kustomization.yaml': `resources: [../../base]
namespace: staging
namePrefix: staging-
nameSuffix: -v2
labels:
  - pairs: {env: staging}
    includeSelectors: true
images:
  - {name: nginx, newTag: '1.27'}
  - {name: busybox, newTag: '1.36'}
`,
};

/** An overlay that sets a Rollout's replicas (kustomize's `replicas:` knows only workload kinds). */
export const WITH_REPLICAS: Record<string, string> = {
  'overlays/scaled/kustomization.yaml': `resources: [../../base]
replicas:
  - {name: ro-web, count: 5}
`,
};

/**
 * An overlay that lists a transformer configuration of its own, as users who followed Argo's advice
 * do: its own reference (a field of a custom kind) and Rollout label fields without an API group.
 */
export const WITH_OWN_CONFIGURATION: Record<string, string> = {
  'overlays/own/kustomization.yaml': `resources: [../../base, widget.yaml]
namePrefix: own-
commonLabels: {env: own}
configurations:
  - widget-references.yaml   # our Widget names a ConfigMap
configMapGenerator:
  - {name: widget-settings, literals: [SIZE=3]}
`,
  'overlays/own/widget.yaml': `apiVersion: example.test/v1
kind: Widget
metadata:
  name: gadget
spec:
  settingsName: widget-settings
`,
  'overlays/own/widget-references.yaml': `nameReference:
  - kind: ConfigMap
    version: v1
    fieldSpecs:
      - {kind: Widget, group: example.test, path: spec/settingsName}
commonLabels:
  - {kind: Rollout, path: spec/selector/matchLabels, create: true}
  - {kind: Rollout, path: spec/template/metadata/labels, create: true}
`,
};

/**
 * A Component that adds a generated ConfigMap and a patch pointing the Rollout at it, and an overlay
 * that uses it with a suffix.
 */
export const WITH_COMPONENT: Record<string, string> = {
  'components/flags/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
configMapGenerator:
  - {name: cm-flags, literals: [DARK_MODE=on]}
patches:
  - target: {kind: Rollout, name: ro-web}
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/envFrom/-
        value: {configMapRef: {name: cm-flags}}
`,
  'overlays/flags/kustomization.yaml': `resources: [../../base]
components: [../../components/flags]
nameSuffix: -flags
`,
};
