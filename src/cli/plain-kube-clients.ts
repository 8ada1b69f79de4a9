// The CLI's connection without @kubernetes/client-node, for a simple kubeconfig (a token, a client
// certificate or a password: simple-kubeconfig.ts). Loading client-node is most of a short command's
// start-up; its reads and merge patches need none of it. --cluster and every other kubeconfig (exec
// plugins, auth providers, merged files, in-cluster) are left to client-node: the caller falls back.
import { plainBuiltinReads } from '../kube/builtin-object-client.ts';
import { type CustomObjectClient, openCustomObjectClient } from '../kube/custom-object-client.ts';
import type { ObjectReadClients } from '../kube/object-read-clients.ts';
import { readSimpleKubeconfig } from '../kube/simple-kubeconfig.ts';
import type { ClusterFlags } from './cluster-flag.ts';
import type { KubeFlags } from './kube-flags.ts';

/** The plain clients of one command, the namespace its flags and kubeconfig name, and their connection's end. */
export interface PlainKubeClients extends ObjectReadClients {
  custom: CustomObjectClient;
  namespace: string;
  /** Lets the process exit at once instead of when the kept-alive connection times out. */
  close(): void;
}

/**
 * The plain clients, or undefined when client-node must connect (--cluster, a kubeconfig beyond simple, a
 * file it names that cannot be read).
 */
export function openPlainKubeClients(flags: KubeFlags & ClusterFlags): PlainKubeClients | undefined {
  if (flags.cluster !== undefined) return undefined;
  const simple = readSimpleKubeconfig(flags);
  if (simple === undefined) return undefined;
  const custom = openCustomObjectClient(simple);
  if (custom === undefined) return undefined;
  return {
    custom,
    ...plainBuiltinReads((path) => custom.readPath(path)),
    namespace: simple.namespace,
    close: () => custom.close(),
  };
}
