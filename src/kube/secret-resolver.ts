// Resolves AnalysisRun args that come from a Secret (valueFrom.secretKeyRef) with the real client.
import type { SecretResolver } from '../analysis/build-analysis-run.ts';
import type { KubeClients } from './client.ts';
import { kubeCall } from './errors.ts';

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

/**
 * A {@link SecretResolver} that reads `key` of Secret `namespace/name` (CoreV1 readNamespacedSecret)
 * and base64-decodes it (`stringData` is never returned by the API server). Values are never logged;
 * errors name the Secret and key only. A missing Secret is a `KubeNotFoundError`.
 */
export function createKubeSecretResolver(clients: KubeClients): SecretResolver {
  return async (namespace: string, name: string, key: string): Promise<string> => {
    const secret = await kubeCall({ verb: 'get', kind: 'Secret', namespace, name }, () =>
      clients.core.readNamespacedSecret({ namespace, name }),
    );
    const encoded = secret.data?.[key];
    if (encoded === undefined) throw new SecretKeyMissingError(namespace, name, key);
    return Buffer.from(encoded, 'base64').toString('utf8');
  };
}
