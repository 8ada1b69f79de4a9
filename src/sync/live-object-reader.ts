// Reads a source's live objects for their health: one list per kind and namespace (selected by the source's
// label), never a GET per object, with the group's preferred version found by discovery.
import { ApisApi, KubernetesObjectApi, type KubeConfig } from '@kubernetes/client-node';
import { makePooledApiClient, toPlainObject } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import type { LiveObject } from '../health/object-health.ts';
import { SOURCE_LABEL } from './sync-labels.ts';

/** The objects of one kind in one namespace (undefined: cluster-scoped) carrying `source`'s label. */
export interface LiveObjectReader {
  /** Undefined when the cluster does not serve the kind (its CRD is gone): every such object is missing. */
  list(
    group: string,
    kind: string,
    namespace: string | undefined,
    source: string,
  ): Promise<LiveObject[] | undefined>;
  /** One object (undefined when absent or its kind not served): for kinds the process may get but not list. */
  get(
    group: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): Promise<LiveObject | undefined>;
}

export class KubeLiveObjectReader implements LiveObjectReader {
  private readonly objects: KubernetesObjectApi;
  private readonly apis: ApisApi;
  /** Group → its preferred `group/version`, from the last discovery (refreshed when a group is not in it). */
  private preferred: Promise<Map<string, string>> | undefined;

  constructor(kubeConfig: KubeConfig) {
    this.objects = makePooledApiClient(kubeConfig, KubernetesObjectApi);
    this.apis = makePooledApiClient(kubeConfig, ApisApi);
  }

  async list(
    group: string,
    kind: string,
    namespace: string | undefined,
    source: string,
  ): Promise<LiveObject[] | undefined> {
    const apiVersion = await this.apiVersionOf(group);
    if (apiVersion === undefined) return undefined;
    try {
      const list = await kubeCall({ verb: 'list', kind, ...(namespace ? { namespace } : {}) }, () =>
        this.objects.list(
          apiVersion,
          kind,
          namespace,
          undefined,
          undefined,
          undefined,
          undefined,
          `${SOURCE_LABEL}=${source}`,
        ),
      );
      return toPlainObject<{ items?: LiveObject[] }>(list).items ?? [];
    } catch (err) {
      // The kind is not served in this group (any more): its objects cannot be there.
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async get(
    group: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): Promise<LiveObject | undefined> {
    const apiVersion = await this.apiVersionOf(group);
    if (apiVersion === undefined) return undefined;
    try {
      const live = await kubeCall({ verb: 'get', kind, name, ...(namespace ? { namespace } : {}) }, () =>
        this.objects.read({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } }),
      );
      return toPlainObject<LiveObject>(live);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async apiVersionOf(group: string): Promise<string | undefined> {
    if (group === '') return 'v1';
    const known = await this.discover(false);
    return known.get(group) ?? (await this.discover(true)).get(group);
  }

  private discover(again: boolean): Promise<Map<string, string>> {
    if (this.preferred === undefined || again) {
      const read = kubeCall({ verb: 'get', kind: 'APIGroupList' }, () => this.apis.getAPIVersions()).then(
        (list) =>
          new Map(
            list.groups.flatMap((g) =>
              g.preferredVersion ? [[g.name, g.preferredVersion.groupVersion] as const] : [],
            ),
          ),
      );
      read.catch(() => {
        if (this.preferred === read) this.preferred = undefined;
      });
      this.preferred = read;
    }
    return this.preferred;
  }
}
