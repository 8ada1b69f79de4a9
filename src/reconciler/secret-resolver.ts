// Resolves AnalysisRun args that come from a Secret (valueFrom.secretKeyRef), and reads metric providers' account Secrets, with the real client.
import type { SecretResolver } from '../analysis/build-analysis-run.ts';
import type { ProviderSecrets } from '../analysis/providers/provider-secrets.ts';
import type { KubeClients } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';

/**
 * The label a Secret must carry, with the value `"true"`, before an AnalysisTemplate may read it
 * through `valueFrom.secretKeyRef`: without it any template in the namespace could send any Secret
 * of the namespace (service account tokens, registry credentials) to a metric provider's URL.
 */
export const ANALYSIS_SECRET_LABEL = 'rollgate.dev/analysis-secret';

// A Secret name is a DNS subdomain; anything else never reaches the API path.
const SECRET_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The Secret exists but has no such key (a human must fix the Secret or the template). */
export class SecretKeyMissingError extends Error {
  override readonly name = 'SecretKeyMissingError';
  readonly code = 'kube.secret_key_missing';
  constructor(
    readonly namespace: string,
    readonly secret: string,
    readonly key: string,
  ) {
    super(`Secret ${namespace}/${secret} has no key ${JSON.stringify(key)}`);
  }
}

/** The Secret may not be read for analysis: it does not opt in with {@link ANALYSIS_SECRET_LABEL}, or its name is not a Secret name. */
export class SecretNotAllowedError extends Error {
  override readonly name = 'SecretNotAllowedError';
  readonly code = 'kube.secret_not_allowed';
  constructor(
    readonly namespace: string,
    readonly secret: string,
    readonly reason: string,
  ) {
    super(`Secret ${namespace}/${secret} may not be used by analysis: ${reason}`);
  }
}

/**
 * A {@link SecretResolver} that reads `key` of Secret `namespace/name` (CoreV1 readNamespacedSecret)
 * and base64-decodes it (`stringData` is never returned by the API server). The namespace is always
 * the AnalysisRun's own (the caller passes it; a secretKeyRef cannot name another), and the Secret
 * must be labelled `rollgate.dev/analysis-secret: "true"`, else {@link SecretNotAllowedError}. Values
 * are never logged; errors name the Secret and key only. A missing Secret is a `KubeNotFoundError`.
 */
export function createKubeSecretResolver(clients: KubeClients): SecretResolver {
  return async (namespace: string, name: string, key: string): Promise<string> => {
    if (!SECRET_NAME.test(name)) throw new SecretNotAllowedError(namespace, name, 'not a valid Secret name');
    const secret = await kubeCall({ verb: 'get', kind: 'Secret', namespace, name }, () =>
      clients.core.readNamespacedSecret({ namespace, name }),
    );
    if (secret.metadata?.labels?.[ANALYSIS_SECRET_LABEL] !== 'true') {
      throw new SecretNotAllowedError(
        namespace,
        name,
        `it is not labelled ${ANALYSIS_SECRET_LABEL}: "true" (label the Secret to let AnalysisTemplates in its namespace read it)`,
      );
    }
    const encoded = secret.data?.[key];
    if (encoded === undefined) throw new SecretKeyMissingError(namespace, name, key);
    return Buffer.from(encoded, 'base64').toString('utf8');
  };
}

/**
 * The {@link ProviderSecrets} of a reconciler: a Secret by name in `ownNamespace`
 * (`kubernetes.stateNamespace`, where Argo's providers read `datadog`, `newrelic`, `influxdb` and
 * `wavefront-api-tokens` from its own
 * namespace), or, when a metric asks for its run's namespace (Datadog's `secretRef.namespaced`), in
 * that namespace, where it must carry {@link ANALYSIS_SECRET_LABEL} like any Secret a template reads.
 * A missing Secret is `undefined`; values are base64-decoded and never logged.
 */
export function createKubeProviderSecrets(clients: KubeClients, ownNamespace: string): ProviderSecrets {
  return {
    async read(name, namespace) {
      const where = namespace ?? ownNamespace;
      if (!SECRET_NAME.test(name)) throw new SecretNotAllowedError(where, name, 'not a valid Secret name');
      let secret;
      try {
        secret = await kubeCall({ verb: 'get', kind: 'Secret', namespace: where, name }, () =>
          clients.core.readNamespacedSecret({ namespace: where, name }),
        );
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
      if (namespace !== undefined && secret.metadata?.labels?.[ANALYSIS_SECRET_LABEL] !== 'true')
        throw new SecretNotAllowedError(
          where,
          name,
          `it is not labelled ${ANALYSIS_SECRET_LABEL}: "true" (label the Secret to let AnalysisTemplates in its namespace read it)`,
        );
      return Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([key, value]) => [
          key,
          Buffer.from(value, 'base64').toString('utf8'),
        ]),
      );
    },
  };
}
