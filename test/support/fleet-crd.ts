// A Fleet CRD as small as it can be (any fields kept): for tests that read Fleets as unstructured objects and must
// decide when the kind appears, rather than get Rollgate's whole CRD set at once.

/** `fleets.rollgate.dev`, v1alpha1, namespaced, its schema preserving every field. */
export const MINIMAL_FLEET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'fleets.rollgate.dev' },
  spec: {
    group: 'rollgate.dev',
    scope: 'Namespaced',
    names: { plural: 'fleets', singular: 'fleet', kind: 'Fleet', listKind: 'FleetList' },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
} as const;
