// Writes one route object: read it, translate, write it back with the resourceVersion read; a 409 re-reads.
import { ApisApi } from '@kubernetes/client-node';
import { sameJson } from '../rollout/index.ts';
import { FIELD_MANAGER, makePooledApiClient, toPlainObject, type KubeClients } from '../kube/client.ts';
import { KubeConflictError, isNotFound, kubeCall } from '../kube/errors.ts';
import type { RouteTarget, RouteWeights } from './traffic-router.ts';

/** What one write did. */
export type RouteWriteResult = 'unchanged' | 'created' | 'updated' | 'deleted';

/** The route's API group is not served at all: its CRDs are not installed. */
export class RouteApiMissingError extends Error {
  override readonly name = 'RouteApiMissingError';
  readonly code = 'traffic.api_missing';
  constructor(
    readonly object: string,
    readonly wanted: string,
  ) {
    super(`${object}: the API ${wanted} is not served by the cluster (are its CRDs installed?)`);
  }
}

/** An API group and version the cluster serves for a route's kind. */
interface ServedApi {
  group: string;
  version: string;
}

export interface RouteWriterOptions {
  /** Reads and writes of one object before a 409 is handed back to the caller (default 5). */
  maxAttempts?: number;
  /** How long a discovered API version is trusted (default 60 s). */
  discoveryTtlMs?: number;
  /** Monotonic milliseconds (tests inject their own). */
  nowMs?: () => number;
}

type Plain = Record<string, unknown>;

/** What the writer needs to find an object: a route target or the object one is derived from. */
type RouteObjectRef = Pick<RouteTarget, 'resource' | 'namespace' | 'name'>;

/**
 * The Kubernetes side of a router: one {@link RouteTarget} at a time, it reads the object, runs the
 * target's pure translation, and writes the result only when it differs from what was read: a
 * replace carrying the resourceVersion read (a create when absent and the translation asks for one).
 * A 409 (someone else wrote meanwhile, or created it first) re-reads and translates again, at most
 * `maxAttempts` times. The API version used is the first of the target's versions the cluster serves.
 */
export class RouteWriter {
  private readonly apis: ApisApi;
  private readonly served = new Map<string, { versions: string[]; atMs: number }>();
  private readonly maxAttempts: number;
  private readonly ttlMs: number;
  private readonly nowMs: () => number;

  constructor(
    private readonly clients: KubeClients,
    options: RouteWriterOptions = {},
  ) {
    this.apis = makePooledApiClient(clients.kubeConfig, ApisApi);
    this.maxAttempts = options.maxAttempts ?? 5;
    this.ttlMs = options.discoveryTtlMs ?? 60_000;
    this.nowMs = options.nowMs ?? (() => performance.now());
  }

  /**
   * Brings the object to the weights; idempotent (a second call with the same weights writes nothing).
   * The object it is derived from, if any, is read first, once: a 409 on the target is about the
   * target, and the next call reads the source again anyway.
   */
  async write(target: RouteTarget, weights: RouteWeights): Promise<RouteWriteResult> {
    const from = target.derivedFrom;
    const source = from === undefined ? undefined : await this.read(from, await this.apiFor(from));
    return this.apply(target, (live) => target.translate(live, weights, source));
  }

  /**
   * The target as written: itself, or for a target named by another object (`resolve`), the target of
   * the object that one names now (read first). Throws the target's error when it names none.
   */
  async resolve(target: RouteTarget): Promise<RouteTarget> {
    if (target.resolve === undefined || target.derivedFrom === undefined) return target;
    const from = target.derivedFrom;
    const resolved = target.resolve(await this.read(from, await this.apiFor(from)));
    if (resolved instanceof Error) throw resolved;
    return resolved;
  }

  /**
   * Reads the target's object, runs `change` (pure: the object to write, undefined to leave an absent
   * object absent, null to delete it, or an Error to throw) and writes the result when it differs; a 409 re-reads and
   * runs `change` again.
   */
  async apply(
    target: RouteTarget,
    change: (live: Plain | undefined) => Plain | Error | null | undefined,
  ): Promise<RouteWriteResult> {
    const api = await this.apiFor(target);
    const { group, version } = api;
    const { plural, kind } = target.resource;
    const { namespace, name } = target;
    const at = { group, version, namespace, plural, name };
    let conflict: unknown;
    for (let attempt = 0; attempt < this.maxAttempts; attempt += 1) {
      const live = await this.read(target, api);
      const desired = change(live);
      if (desired instanceof Error) throw desired;
      if (desired === undefined || (desired === null && live === undefined)) return 'unchanged';
      if (live !== undefined && sameJson(live, desired)) return 'unchanged';
      try {
        if (desired === null) {
          // Deleted only as read: a write in between is a 409, and the next attempt translates again.
          const resourceVersion = (live!['metadata'] as { resourceVersion?: string } | undefined)
            ?.resourceVersion;
          try {
            await kubeCall({ verb: 'delete', kind, namespace, name }, () =>
              this.clients.custom.deleteNamespacedCustomObject({
                ...at,
                ...(resourceVersion !== undefined && { body: { preconditions: { resourceVersion } } }),
              }),
            );
          } catch (err) {
            if (isNotFound(err)) return 'unchanged';
            throw err;
          }
          return 'deleted';
        }
        if (live === undefined) {
          const body = { ...desired, apiVersion: `${group}/${version}`, kind };
          await kubeCall({ verb: 'create', kind, namespace, name }, () =>
            this.clients.custom.createNamespacedCustomObject({
              group,
              version,
              namespace,
              plural,
              body,
              fieldManager: FIELD_MANAGER,
            }),
          );
          return 'created';
        }
        // The translation keeps metadata as read, resourceVersion included: a concurrent write is a 409.
        await kubeCall({ verb: 'update', kind, namespace, name }, () =>
          this.clients.custom.replaceNamespacedCustomObject({
            ...at,
            body: desired,
            fieldManager: FIELD_MANAGER,
          }),
        );
        return 'updated';
      } catch (err) {
        if (!(err instanceof KubeConflictError)) throw err;
        conflict = err;
      }
    }
    throw conflict;
  }

  /** The target's object as the cluster holds it now (undefined when absent); reads only. */
  async readLive(target: RouteTarget): Promise<Plain | undefined> {
    return this.read(target, await this.apiFor(target));
  }

  private async read(target: RouteObjectRef, api: ServedApi): Promise<Plain | undefined> {
    const { group, version } = api;
    const { plural, kind } = target.resource;
    const { namespace, name } = target;
    try {
      const found = await kubeCall({ verb: 'get', kind, namespace, name }, () =>
        this.clients.custom.getNamespacedCustomObject({ group, version, namespace, plural, name }),
      );
      return toPlainObject<Plain>(found);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * The group and version to use: the first of the resource's versions served in its group, else in
   * each of its `alsoServedAs` groups in turn. One discovery read fills the cache for all of them.
   */
  private async apiFor(target: RouteObjectRef): Promise<ServedApi> {
    const { group, versions, kind, alsoServedAs = [] } = target.resource;
    const candidates = [{ group, versions }, ...alsoServedAs];
    const fresh = (name: string) => {
      const cached = this.served.get(name);
      return cached !== undefined && this.nowMs() - cached.atMs < this.ttlMs ? cached.versions : undefined;
    };
    const served = new Map(candidates.map((candidate) => [candidate.group, fresh(candidate.group)]));
    if ([...served.values()].some((versions) => versions === undefined)) {
      const list = await kubeCall({ verb: 'get', kind: 'APIGroupList' }, () => this.apis.getAPIVersions());
      const groups =
        toPlainObject<{
          groups?: Array<{ name?: string; versions?: Array<{ version?: string }> }>;
        }>(list).groups ?? [];
      for (const candidate of candidates) {
        const entry = groups.find((g) => g.name === candidate.group);
        const versions = (entry?.versions ?? []).flatMap((v) => (v.version ? [v.version] : []));
        served.set(candidate.group, versions);
        this.served.set(candidate.group, { versions, atMs: this.nowMs() });
      }
    }
    for (const candidate of candidates) {
      const versions = served.get(candidate.group) ?? [];
      const version = candidate.versions.find((v) => versions.includes(v));
      if (version !== undefined) return { group: candidate.group, version };
    }
    for (const candidate of candidates) this.served.delete(candidate.group);
    throw new RouteApiMissingError(
      `${kind} ${target.namespace}/${target.name}`,
      candidates.map((candidate) => `${candidate.group}/${candidate.versions.join('|')}`).join(' or '),
    );
  }
}
