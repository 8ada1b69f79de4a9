// One look at the demo rollout: its view (as `rollgate status` shows it) plus the image of every revision.
import type { KubeClients } from '../kube/client.ts';
import { readRolloutView, type RolloutView } from '../views/rollout-view.ts';

/** The rollout as the demo watches it; `images` maps pod-template hash → container image. */
export interface RolloutSnapshot {
  view: RolloutView;
  images: ReadonlyMap<string, string>;
}

/** Reads the rollout and its ReplicaSets' images; undefined while the Rollout does not exist yet. */
export async function readRolloutSnapshot(
  clients: KubeClients,
  key: { namespace: string; name: string },
): Promise<RolloutSnapshot | undefined> {
  const view = await readRolloutView(clients, key);
  if (view === undefined) return undefined;
  const list = await clients.apps.listNamespacedReplicaSet({ namespace: key.namespace });
  const images = new Map<string, string>();
  for (const rs of list.items) {
    const hash = rs.metadata?.labels?.['rollouts-pod-template-hash'];
    const image = rs.spec?.template?.spec?.containers[0]?.image;
    if (hash !== undefined && image !== undefined) images.set(hash, image);
  }
  return { view, images };
}

/** The image of the stable revision, if one is recorded. */
export function stableImage(snapshot: RolloutSnapshot): string | undefined {
  const hash = snapshot.view.stableRS;
  return hash === undefined ? undefined : snapshot.images.get(hash);
}

/** The image of the newest revision (the canary while one runs, else the stable one). */
export function currentImage(snapshot: RolloutSnapshot): string | undefined {
  const hash = snapshot.view.currentPodHash;
  return hash === undefined ? undefined : snapshot.images.get(hash);
}

/** The short name of an image for progress lines: its tag (or digest), else the whole reference. */
export function imageTag(image: string | undefined): string {
  if (image === undefined) return '-';
  const at = image.lastIndexOf('@');
  if (at >= 0) return image.slice(at + 1, at + 20);
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? image.slice(colon + 1) : image;
}

/**
 * One progress line: step, weights, canary and stable readiness with their image tags, phase and
 * message. Pure, so the format is tested without a cluster.
 */
export function describeSnapshot(snapshot: RolloutSnapshot): string {
  const { view } = snapshot;
  const parts: string[] = [];
  const total = view.steps.length;
  const index = view.currentStepIndex ?? 0;
  if (total > 0) {
    const step = view.steps[index];
    parts.push(
      index >= total
        ? `steps done ${total}/${total}`
        : `step ${index + 1}/${total} ${step?.description ?? ''}`,
    );
  }
  parts.push(`canary ${view.weights.canary}% / stable ${view.weights.stable}%`);
  const canary = view.replicaSets.find((rs) => rs.role === 'canary');
  const stable = view.replicaSets.find((rs) => rs.role === 'stable');
  if (canary)
    parts.push(
      `canary ${imageTag(snapshot.images.get(canary.podTemplateHash))} ready ${canary.ready}/${canary.desired}`,
    );
  if (stable)
    parts.push(
      `stable ${imageTag(snapshot.images.get(stable.podTemplateHash))} ready ${stable.ready}/${stable.desired}`,
    );
  const phase = `${view.phase}${view.aborted ? ' (aborted)' : ''}${view.paused && !view.aborted ? ' (paused)' : ''}`;
  parts.push(view.message ? `${phase}: ${view.message}` : phase);
  return parts.join(' · ');
}
