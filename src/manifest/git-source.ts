// The GitSource custom resource (rollgate.dev/v1alpha1): a Git source declared as an object in the cluster.
import { z } from 'zod';

/** The kind, its plural and the finalizer that makes a delete prune what the source applied. */
export const GIT_SOURCE_KIND = 'GitSource';
export const GIT_SOURCE_PLURAL = 'gitsources';
export const PRUNE_FINALIZER = 'rollgate.dev/prune';

const secretName = z.string().min(1);

/** What the API server checks on a write; the rest (one ref, durations, tenancy) is read by src/sources. */
export const gitSourceSpecSchema = z
  .object({
    /** http(s) URL of the repository (credentials come from `credentials`, never from the URL). */
    url: z.string().min(1),
    /** Exactly one of branch, tag or commit; default `{ branch: main }`. */
    ref: z
      .object({
        branch: z.string().min(1).optional(),
        tag: z.string().min(1).optional(),
        commit: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    path: z.string().optional(),
    /**
     * The registered cluster the source applies to (default: the local cluster). Only a GitSource of the
     * control namespace may name another cluster.
     */
    cluster: z.string().min(1).optional(),
    /** A duration such as "30s", "5m" or whole seconds (default 30s). */
    interval: z.union([z.string(), z.number().int()]).optional(),
    render: z.enum(['auto', 'plain', 'kustomize']).optional(),
    prune: z.boolean().optional(),
    selfHeal: z.boolean().optional(),
    /** With it, deleting the object prunes what the source applied (finalizer rollgate.dev/prune). */
    pruneOnDelete: z.boolean().optional(),
    /** A Secret of the object's namespace with keys username/password/token. */
    credentials: z
      .object({ secretRef: z.object({ name: secretName }).strict() })
      .strict()
      .optional(),
    /** A Secret of the object's namespace holding the webhook secret (key default `secret`). */
    webhook: z
      .object({
        secretRef: z.object({ name: secretName, key: z.string().min(1).optional() }).strict(),
      })
      .strict()
      .optional(),
    serviceAccountName: z.string().min(1).optional(),
    scope: z
      .object({
        namespaces: z.array(z.string()).optional(),
        clusterScoped: z.array(z.string()).optional(),
        kinds: z
          .object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    adopt: z.enum(['none', 'unowned']).optional(),
    dependsOn: z
      .array(z.object({ name: z.string().min(1), namespace: z.string().min(1).optional() }).strict())
      .optional(),
    syncTimeout: z.union([z.string(), z.number().int()]).optional(),
    allowInsecureHttp: z.boolean().optional(),
  })
  .strict();
export type GitSourceSpec = z.infer<typeof gitSourceSpecSchema>;

/** The whole object as the CRD is generated from it (status is Rollgate's, kept open). */
export const gitSourceSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.object({}).loose(),
  spec: gitSourceSpecSchema,
});
