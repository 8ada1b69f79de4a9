// Where SaaS metric providers read their account Secrets (Datadog's keys, a New Relic profile): an injected reader.

/**
 * Reads a provider's Secret, as Argo's providers read theirs: by default in the controller's own
 * namespace (Rollgate's `kubernetes.stateNamespace`), where only an administrator writes; with
 * `namespace` in that namespace (an AnalysisRun's own, for Datadog's `secretRef.namespaced`).
 * Resolves to the Secret's data decoded to text, or `undefined` when there is no such Secret.
 * Rejects (with a message naming the Secret, never a value) when it exists but may not be read.
 */
export interface ProviderSecrets {
  read(name: string, namespace?: string): Promise<Readonly<Record<string, string>> | undefined>;
}

/** A reader over fixed Secrets keyed `name` (the controller's namespace) or `namespace/name`: for tests and the CLI. */
export function staticProviderSecrets(
  secrets: Readonly<Record<string, Readonly<Record<string, string>>>>,
): ProviderSecrets {
  return {
    read: (name, namespace) =>
      Promise.resolve(secrets[namespace === undefined ? name : `${namespace}/${name}`]),
  };
}
