// The cluster side of a revert look: the parent's ConfigMaps and Secrets applied as the sync applies, the Rollout told which pull request.
import { MERGE_PATCH, VERB_FIELD_MANAGER, type KubeClients } from '../kube/client.ts';
import { kubeCall } from '../kube/errors.ts';
import type { EventRecorder } from '../kube/event-recorder.ts';
import type { DrivenApi } from '../manifest/driven-api.ts';
import type { RestoredObject } from '../revert/revert-action.ts';
import type { ObjectApplier } from '../sync/object-applier.ts';
import { RESTORED_FOR_ANNOTATION } from '../sync/sync-labels.ts';
import { REVERT_PULL_REQUEST_ANNOTATION, REVERT_REVISION_ANNOTATION, type RevertDeps } from './run-revert.ts';

/**
 * `restore`: the parent commit's object, prepared and server-side applied by the source's own applier
 * (field manager `rollgate`, the source's labels and scope, its ServiceAccount when it has one), so the
 * next sync of the same object takes it over as its own; a live object already equal is not written.
 * `record`: the two annotations on the Rollout and the Event `RevertPullRequestOpened`.
 */
export function clusterRevertPorts(options: {
  applier: ObjectApplier;
  /** The parent commit: the restored objects say they come from it (`rollgate.dev/commit`). */
  parent: () => string;
  /** The aborted commit: a drift check does not re-apply its content while it stays the synced one. */
  aborted: string;
  clients: KubeClients;
  api: DrivenApi;
  rollout: { namespace: string; name: string };
  events: EventRecorder;
}): Pick<RevertDeps, 'restore' | 'record'> {
  const { applier, clients, api, rollout } = options;
  return {
    async restore(object: RestoredObject) {
      const prepared = await applier.prepare(
        {
          key: `${object.kind}/${object.namespace}/${object.name}`,
          apiVersion: 'v1',
          kind: object.kind,
          namespace: object.namespace,
          name: object.name,
          object: object.manifest,
          file: object.file,
        },
        options.parent(),
      );
      const metadata = prepared.metadata as { annotations?: Record<string, unknown> };
      metadata.annotations = { ...metadata.annotations, [RESTORED_FOR_ANNOTATION]: options.aborted };
      await applier.apply(prepared);
    },
    async record(pullRequest, revision) {
      const body = {
        metadata: {
          annotations: {
            [REVERT_PULL_REQUEST_ANNOTATION]: pullRequest.url,
            [REVERT_REVISION_ANNOTATION]: revision,
          },
        },
      };
      // The arguments are written out in the call: the install test derives the RBAC rules from them.
      await kubeCall({ verb: 'patch', kind: 'Rollout', ...rollout }, () =>
        clients.custom.patchNamespacedCustomObject(
          {
            group: api.group,
            version: api.version,
            plural: api.plurals.rollouts,
            namespace: rollout.namespace,
            name: rollout.name,
            body,
            fieldManager: VERB_FIELD_MANAGER,
          },
          MERGE_PATCH,
        ),
      );
      await options.events.record(
        { apiVersion: api.apiVersion, kind: 'Rollout', ...rollout },
        {
          type: 'Normal',
          reason: 'RevertPullRequestOpened',
          message: `revision ${revision} aborted: revert pull request #${pullRequest.number} ${pullRequest.url}`,
        },
      );
    },
  };
}
