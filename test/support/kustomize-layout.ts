// Test helper: the repository layout, apps/web/base (Rollout, Service, configMapGenerator) with staging and prod overlays.

/** A Rollout running `image`, reading its settings from the ConfigMap `web-config`. */
export function webRolloutYaml(image = 'nginx:1.0'): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: ${image}
          envFrom:
            - configMapRef: {name: web-config}
  strategy:
    canary:
      steps:
        - setWeight: 50
        - pause: {}
`;
}

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - port: 80
`;

/** The base kustomization, with a configMapGenerator whose literal is `greeting`. */
export function baseKustomization(greeting = 'hello'): string {
  return `resources:
  - rollout.yaml
  - service.yaml
configMapGenerator:
  - name: web-config
    literals:
      - GREETING=${greeting}
`;
}

/** An overlay: a name prefix, an image tag, and a patch of the replica count. */
export function overlayKustomization(env: string, tag: string, extra = ''): string {
  return `resources:
  - ../../base
namePrefix: ${env}-
images:
  - name: nginx
    newTag: "${tag}"
patches:
  - path: replicas.yaml
${extra}`;
}

export const REPLICAS_PATCH = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 3
`;

/** Every file of the layout under `apps/web/`. */
export function webLayout(options: { stagingTag?: string; prodTag?: string; greeting?: string } = {}) {
  return {
    'apps/web/base/kustomization.yaml': baseKustomization(options.greeting),
    'apps/web/base/rollout.yaml': webRolloutYaml(),
    'apps/web/base/service.yaml': SERVICE,
    'apps/web/overlays/staging/kustomization.yaml': overlayKustomization(
      'staging',
      options.stagingTag ?? '1.1',
    ),
    'apps/web/overlays/staging/replicas.yaml': REPLICAS_PATCH,
    'apps/web/overlays/prod/kustomization.yaml': overlayKustomization('prod', options.prodTag ?? '1.0'),
    'apps/web/overlays/prod/replicas.yaml': REPLICAS_PATCH,
  };
}
