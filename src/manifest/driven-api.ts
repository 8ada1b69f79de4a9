// The API a reconciler drives: the group and version its Rollouts and analysis objects live in, and their plurals.
import { ARGO_API_VERSION, ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from './api-version.ts';

/** The groups a process may drive: Rollgate's own, or Argo Rollouts' (controller mode, docs/controller-mode.md). */
export const DRIVEN_GROUPS = ['rollgate.dev', 'argoproj.io'] as const;
export type DrivenGroup = (typeof DRIVEN_GROUPS)[number];

/**
 * One driven API: every read and write of a Rollout, its AnalysisRuns and templates, the ownerReferences
 * it stamps on ReplicaSets and runs, and the Events' involvedObject name it. Passed from the process start
 * down to each action, so one reconciler never writes into the other group.
 */
export interface DrivenApi {
  group: DrivenGroup;
  version: 'v1alpha1';
  /** `group/version`: ownerReferences, Events' involvedObject, the apiVersion of objects created. */
  apiVersion: string;
  plurals: {
    rollouts: 'rollouts';
    analysisRuns: 'analysisruns';
    analysisTemplates: 'analysistemplates';
    clusterAnalysisTemplates: 'clusteranalysistemplates';
    experiments: 'experiments';
  };
}

const PLURALS: DrivenApi['plurals'] = {
  rollouts: 'rollouts',
  analysisRuns: 'analysisruns',
  analysisTemplates: 'analysistemplates',
  clusterAnalysisTemplates: 'clusteranalysistemplates',
  experiments: 'experiments',
};

/** Rollgate's own CRDs: the default, and what a process drives unless `controller.groups` says otherwise. */
export const ROLLGATE_API: DrivenApi = {
  group: ROLLGATE_API_GROUP,
  version: 'v1alpha1',
  apiVersion: ROLLGATE_API_VERSION,
  plurals: PLURALS,
};

/** Argo Rollouts' CRDs, driven in place (controller mode). */
export const ARGO_API: DrivenApi = {
  group: 'argoproj.io',
  version: 'v1alpha1',
  apiVersion: ARGO_API_VERSION,
  plurals: PLURALS,
};

/** The driven API of `group`. */
export function drivenApiOf(group: DrivenGroup): DrivenApi {
  return group === 'argoproj.io' ? ARGO_API : ROLLGATE_API;
}

/** The collection path of `plural` in `api` (`/apis/<group>/<version>/<plural>`), for lists and watches. */
export function drivenPath(api: DrivenApi, plural: keyof DrivenApi['plurals']): string {
  return `/apis/${api.group}/${api.version}/${api.plurals[plural]}`;
}

/**
 * The API Rollgate's own Git sync applies Rollouts in, given the groups a process drives: rollgate.dev
 * (Argo's converted) whenever it is driven, else argoproj.io as written (controller mode alone), so one
 * Rollout is never in both. The promoter reads there too: its Rollouts are the ones the sync applied.
 */
export function syncedRolloutApi(groups: readonly DrivenGroup[]): DrivenApi {
  return groups.includes('rollgate.dev') ? ROLLGATE_API : ARGO_API;
}

/** The driven API an object of `apiVersion` belongs to (an owner's apiVersion, say); Rollgate's by default. */
export function drivenApiOfVersion(apiVersion: string | undefined): DrivenApi {
  return apiVersion === ARGO_API.apiVersion ? ARGO_API : ROLLGATE_API;
}
