// What the readers of one rollout's world call (ObservedStateReader, the workloadRef and AnalysisRun
// reads): the read methods of client-node's typed clients, and nothing else. client-node's KubeClients
// provide them, and so does the CLI's plain client for a simple kubeconfig (cli/plain-read-clients.ts),
// which is why these readers must not need more.
import type { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';

export interface ObjectReadClients {
  custom: Pick<CustomObjectsApi, 'getNamespacedCustomObject' | 'listNamespacedCustomObject'>;
  core: Pick<CoreV1Api, 'listNamespacedPod' | 'readNamespacedService' | 'readNamespacedPodTemplate'>;
  apps: Pick<AppsV1Api, 'listNamespacedReplicaSet' | 'readNamespacedReplicaSet' | 'readNamespacedDeployment'>;
}
