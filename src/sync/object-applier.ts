// Applies desired objects from Git to the cluster by server-side apply (creates those with only generateName), and prunes what left Git.
import {
  KubernetesObjectApi,
  PatchStrategy,
  type CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { manifestDigest } from '../git/manifest-parser.ts';
import { groupOf } from '../manifest/object-references.ts';
import {
  APPLY_PATCH,
  createKubeClients,
  FIELD_MANAGER,
  makePooledApiClient,
  toPlainObject,
} from '../kube/client.ts';
import { isNotFound, kubeCall, KubeForbiddenError, type KubeRequestContext } from '../kube/errors.ts';
import { serviceAccountUser } from '../kube/impersonation.ts';
import {
  ROLLGATE_API_VERSION,
  toAppliedApiVersion,
  type AcceptedApiVersion,
} from '../manifest/api-version.ts';
import { driftedFields } from '../kube/drift.ts';
import { decideOwnership } from './object-ownership.ts';
import { ObjectRefusedError } from './object-refused-error.ts';
import { inventoryKey } from './source-inventory.ts';
import { decideScope, refusedKind, sourceScopeOf, type SourceScope } from './source-scope.ts';
import {
  COMMIT_ANNOTATION,
  COMMIT_AUTHOR_ANNOTATION,
  FILE_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  MANIFEST_DIGEST_LABEL,
  SOURCE_LABEL,
} from './sync-labels.ts';

/** An object as Git wants it, with where it is defined. */
export interface DesiredObject {
  key: string;
  apiVersion: string;
  kind: string;
  namespace?: string;
  /** Absent for an object Git names only by generateName (see {@link ObjectApplier.createGenerated}). */
  name?: string;
  object: Record<string, unknown>;
  file: string;
  line?: number;
}

/** The identity of a live object. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export type ApplyResult = 'created' | 'updated' | 'unchanged';
/**
 * `not-managed`: the live object is not this source's to delete (not labelled as its own, not in its
 * inventory, or outside its scope); it is left alone.
 */
export type RemoveResult = 'deleted' | 'absent' | 'not-managed';

/** What {@link ObjectApplier.createGenerated} did, and the name the object has in the cluster. */
export interface CreateGeneratedResult {
  result: 'created' | 'unchanged';
  name: string;
}

/**
 * The cluster does not serve this kind (its CRD is not installed yet). Not a refusal of the object:
 * the sync fails and is retried, holding the synced commit, until the CRD exists.
 */
export class UnknownKindError extends Error {
  override readonly name = 'UnknownKindError';
  readonly code = 'sync.unknown_kind';
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(`the cluster does not serve ${kind} in ${apiVersion} (is its CustomResourceDefinition installed?)`);
  }
}

/** client-node's dynamic client with the discovery lookup it keeps protected made public. */
class DiscoveringObjectApi extends KubernetesObjectApi {
  /** The kind's plural and scope, from the discovery this client caches. */
  async resourceOf(
    apiVersion: string,
    kind: string,
  ): Promise<{ name: string; namespaced: boolean } | undefined> {
    return this.resource(apiVersion, kind);
  }
}

type Json = Record<string, unknown>;

const metadataOf = (obj: Json): Json => (obj.metadata ?? {}) as Json;

/** The live object a prepared one is applied to. */
export function preparedRefOf(prepared: Json): ObjectRef {
  const metadata = metadataOf(prepared);
  return {
    apiVersion: String(prepared.apiVersion),
    kind: String(prepared.kind),
    name: String(metadata.name),
    ...(typeof metadata.namespace === 'string' ? { namespace: metadata.namespace } : {}),
  };
}

/** Seconds since the epoch of a time client-node hands back (a Date, or an RFC 3339 string for untyped kinds). */
const secondsOf = (time: unknown): number => Math.floor(new Date(time as string | Date).getTime() / 1000);

/**
 * Whether an apply's answer shows an object it created: Rollgate's apply is its only field manager and is
 * as old as the object (both times have one-second resolution, so an object Rollgate created and then
 * changed within the same second also counts as created: a label, nothing acts on it).
 */
function createdByThisApply(answer: KubernetesObject): boolean {
  const managed = answer.metadata?.managedFields ?? [];
  const [only] = managed;
  if (managed.length !== 1 || only?.manager !== FIELD_MANAGER || only.operation !== 'Apply') return false;
  const created = answer.metadata?.creationTimestamp;
  return created !== undefined && only.time !== undefined && secondsOf(created) === secondsOf(only.time);
}

/**
 * Applies and removes objects of one source; every write uses field manager `rollgate`. Every object
 * is held to the source's scope (see source-scope.ts) and to who owns the live object
 * (object-ownership.ts): a refused one throws {@link ObjectRefusedError} and nothing is written. With
 * `serviceAccountName`, every request it sends (discovery, the reads that decide a write, the writes)
 * acts as that ServiceAccount, and the API server's RBAC decides too: its 403 is a refusal as well.
 */
export class ObjectApplier {
  private readonly api: DiscoveringObjectApi;
  /**
   * The custom-objects client of Rollgate's own identity (undefined when impersonating): see
   * serverSideApply. Like `api`, it writes whatever kinds Git holds, so its calls name no group or plural
   * the install's RBAC check could read (test/integration/install/api-requests-in-code.ts reads
   * `.custom.` calls of fixed kinds); what the sync may write is the source's scope (docs/security.md).
   */
  private readonly customObjects: CustomObjectsApi | undefined;
  /** What the source may write; without one, only namespaced kinds in `defaultNamespace`. */
  readonly scope: SourceScope;
  /** The user its requests act as (`system:serviceaccount:<own namespace>:<name>`); absent: Rollgate's own. */
  readonly actingAs: string | undefined;

  /** Where Rollouts and analysis kinds go (options.rolloutApiVersion). */
  get rolloutApiVersion(): AcceptedApiVersion {
    return this.options.rolloutApiVersion ?? ROLLGATE_API_VERSION;
  }

  constructor(
    kubeConfig: KubeConfig,
    private readonly options: {
      source: string;
      defaultNamespace: string;
      scope?: SourceScope;
      /**
       * The apiVersion Rollouts and analysis kinds are applied in: rollgate.dev (default; Argo's are
       * converted), or argoproj.io when the process drives only Argo's group (nothing converted to ours).
       */
      rolloutApiVersion?: AcceptedApiVersion;
      /**
       * The source's ServiceAccount, in the source's own namespace (the scope's): every request is sent
       * impersonating it. Absent: Rollgate's own identity.
       */
      serviceAccountName?: string | undefined;
    },
  ) {
    this.scope = options.scope ?? sourceScopeOf({}, options.defaultNamespace);
    this.actingAs =
      options.serviceAccountName === undefined
        ? undefined
        : serviceAccountUser(this.scope.ownNamespace, options.serviceAccountName);
    this.api = makePooledApiClient(kubeConfig, DiscoveringObjectApi, { impersonate: this.actingAs });
    // Impersonated applies stay with client-node, which sends the Impersonate headers.
    this.customObjects = this.actingAs === undefined ? createKubeClients(kubeConfig).custom : undefined;
  }

  /**
   * One request of the applier, its failure typed. A 403 answered to the source's ServiceAccount is a
   * refusal of the object ({@link ObjectRefusedError}, `sync.forbidden`, naming the identity and the API
   * server's reason): the ServiceAccount's rights are the source's to have, not a failure to retry.
   * Without impersonation a 403 stays a KubeForbiddenError (Rollgate's own role is missing a rule).
   */
  private async call<T>(request: KubeRequestContext, send: () => Promise<T>): Promise<T> {
    try {
      return await kubeCall(request, send);
    } catch (err) {
      // A 401 is about Rollgate's own credentials, never the ServiceAccount's rights.
      if (this.actingAs === undefined || !(err instanceof KubeForbiddenError) || err.status !== 403)
        throw err;
      throw new ObjectRefusedError(
        'sync.forbidden',
        'serviceAccountName',
        `the API server refused the request as ${this.actingAs} (${err.message}); grant that ServiceAccount the right, or leave the object out of Git`,
      );
    }
  }

  /**
   * The object exactly as it will be applied: in-cluster apiVersion, namespace, ownership labels.
   * Throws {@link ObjectRefusedError} for an object outside the source's scope.
   */
  async prepare(
    desired: DesiredObject,
    commit: string,
    author?: { name: string; email: string },
  ): Promise<Json> {
    const kindRefusal = refusedKind(this.scope, desired);
    if (kindRefusal !== undefined) throw new ObjectRefusedError('sync.out_of_scope', 'kind', kindRefusal);
    const converted = toAppliedApiVersion(desired.object, this.rolloutApiVersion) as Json;
    const apiVersion = String(converted.apiVersion);
    const namespaced = await this.namespacedOf(apiVersion, desired.kind);
    if (namespaced === undefined) throw new UnknownKindError(apiVersion, desired.kind);
    const decision = decideScope(this.scope, desired, namespaced);
    if (!decision.allowed)
      throw new ObjectRefusedError('sync.out_of_scope', decision.field, decision.message);
    const metadata = { ...metadataOf(converted) };
    if (decision.namespace !== undefined) metadata.namespace = decision.namespace;
    else delete metadata.namespace;
    metadata.labels = {
      ...((metadata.labels ?? {}) as Json),
      [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
      [SOURCE_LABEL]: this.options.source,
      ...(desired.name === undefined ? { [MANIFEST_DIGEST_LABEL]: manifestDigest(desired.object) } : {}),
    };
    metadata.annotations = {
      ...((metadata.annotations ?? {}) as Json),
      [COMMIT_ANNOTATION]: commit,
      ...(author !== undefined ? { [COMMIT_AUTHOR_ANNOTATION]: `${author.name} <${author.email}>` } : {}),
      [FILE_ANNOTATION]: desired.file,
    };
    // Status belongs to controllers; Git never writes it.
    const { status: _status, ...rest } = converted;
    return { ...rest, metadata };
  }

  /**
   * Whether the kind is namespaced, by API discovery; undefined when the cluster does not serve it (no
   * such group/version, or the version lists no such kind). Any other failure of the discovery request
   * is thrown, typed: a network error must not pass for "not served" (a prune would then be skipped).
   */
  private async namespacedOf(apiVersion: string, kind: string): Promise<boolean | undefined> {
    try {
      return await this.call(
        { verb: 'get', kind },
        async () => (await this.api.resourceOf(apiVersion, kind))?.namespaced,
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The live object, or undefined. */
  async read(ref: ObjectRef): Promise<Json | undefined> {
    try {
      const live = await this.call(
        { verb: 'get', kind: ref.kind, namespace: ref.namespace, name: ref.name },
        () =>
          this.api.read({
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            metadata: { name: ref.name, namespace: ref.namespace },
          }),
      );
      return toPlainObject<Json>(live);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The Rollouts of a namespace, as stored (none when the Rollout CRD is not installed). */
  async rolloutsIn(namespace: string): Promise<Json[]> {
    try {
      const list = await this.call({ verb: 'list', kind: 'Rollout', namespace }, () =>
        this.api.list(this.rolloutApiVersion, 'Rollout', namespace),
      );
      return toPlainObject<{ items?: Json[] }>(list).items ?? [];
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
  }

  /**
   * Server-side applies the prepared object (force: Git is the source of truth for the fields it sets).
   * Sends nothing when the live object already holds every value, from the same commit. Throws
   * {@link ObjectRefusedError} when the live object is another source's, or nobody's and adopting it
   * is not allowed (see decideOwnership): the force is only ever used on the source's own objects.
   */
  async apply(prepared: Json): Promise<ApplyResult> {
    const ref = preparedRefOf(prepared);
    const live = await this.read(ref);
    this.mayWriteOver(live);
    if (live && driftedFields(prepared, live).length === 0) return 'unchanged';
    await this.serverSideApply(prepared, ref);
    return live ? 'updated' : 'created';
  }

  /** Throws when the source may not apply over `live`. */
  private mayWriteOver(live: Json | undefined): void {
    const metadata = live === undefined ? undefined : metadataOf(live);
    const decision = decideOwnership(
      this.options.source,
      this.scope.adopt,
      metadata === undefined
        ? undefined
        : {
            labels: (metadata.labels ?? {}) as Record<string, string>,
            annotations: (metadata.annotations ?? {}) as Record<string, string>,
          },
    );
    if (!decision.allowed) throw new ObjectRefusedError('sync.not_owned', 'metadata.name', decision.message);
  }

  /**
   * One server-side apply as field manager `rollgate`, forcing its fields; the API server's answer. A
   * namespaced custom object (a Rollout: one per Rollout a commit changes) goes through the custom-objects
   * client, which sends it plainly (kube/plain-write-clients.ts): client-node's generic client spent as
   * much CPU on this one request as the reconciler's plain path on seven. Same path, query and body (a
   * custom kind has no typed model for client-node to serialize it through); the answer is the API
   * server's JSON, its timestamps strings.
   */
  private serverSideApply(prepared: Json, ref: ObjectRef): Promise<KubernetesObject> {
    const { customObjects } = this;
    return this.call(
      { verb: 'apply', kind: ref.kind, namespace: ref.namespace, name: ref.name },
      async () => {
        // Inside the call: a discovery request it may make fails typed, as client-node's own lookup did.
        const custom = customObjects && (await this.customResourceOf(ref));
        if (customObjects !== undefined && custom !== undefined)
          return (await customObjects.patchNamespacedCustomObject(
            { ...custom, body: prepared, fieldManager: FIELD_MANAGER, force: true },
            APPLY_PATCH,
          )) as KubernetesObject;
        return this.api.patch(
          prepared as KubernetesObject,
          undefined,
          undefined,
          FIELD_MANAGER,
          true,
          PatchStrategy.ServerSideApply,
        );
      },
    );
  }

  /**
   * Where the custom-objects client finds `ref`, when it is a namespaced object of a group that is not
   * Kubernetes' own (no dot, or `*.k8s.io`: kinds client-node may hold a typed model of); else undefined.
   */
  private async customResourceOf(
    ref: ObjectRef,
  ): Promise<
    { group: string; version: string; namespace: string; plural: string; name: string } | undefined
  > {
    const group = groupOf(ref.apiVersion);
    if (ref.namespace === undefined || !group.includes('.') || group.endsWith('.k8s.io')) return undefined;
    const resource = await this.api.resourceOf(ref.apiVersion, ref.kind);
    if (resource?.namespaced !== true) return undefined;
    return {
      group,
      version: ref.apiVersion.slice(group.length + 1),
      namespace: ref.namespace,
      plural: resource.name,
      name: ref.name,
    };
  }

  /**
   * Server-side applies the prepared object without reading it first: one request instead of two, for an
   * object the caller knows the cluster holds differently (see plan-sync's `knownToDiffer`) and knows
   * to be the source's own (it is in the source's inventory: no ownership check is made), where
   * {@link apply}'s read could never find it unchanged. `updated` when the caller knows the cluster held
   * it (changed in Git since the commit the cluster was synced to); otherwise `created` when the answer
   * shows the object new (Rollgate its only field manager, as old as this apply), else `updated`.
   */
  async applyWithoutRead(prepared: Json, knownToExist: boolean): Promise<'created' | 'updated'> {
    const ref = preparedRefOf(prepared);
    const answer = await this.serverSideApply(prepared, ref);
    // The timestamps have one-second resolution: an object changed in the second it was created would
    // look new, so they are only asked about objects the diff says were added.
    return !knownToExist && createdByThisApply(answer) ? 'created' : 'updated';
  }

  /**
   * Creates (POST) a prepared object that has generateName and no name: server-side apply needs a
   * name, and the API server makes one up on create. Nothing is created when an object of this source
   * with the same manifest digest exists already (the label {@link prepare} sets): the answer is then
   * `unchanged` with that object's name.
   */
  async createGenerated(prepared: Json): Promise<CreateGeneratedResult> {
    const metadata = metadataOf(prepared);
    const apiVersion = String(prepared.apiVersion);
    const kind = String(prepared.kind);
    const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : undefined;
    const labels = (metadata.labels ?? {}) as Json;
    const selector = [MANAGED_BY_LABEL, SOURCE_LABEL, MANIFEST_DIGEST_LABEL]
      .map((label) => `${label}=${String(labels[label])}`)
      .join(',');
    const existing = await this.call({ verb: 'list', kind, namespace }, () =>
      this.api.list(apiVersion, kind, namespace, undefined, undefined, undefined, undefined, selector),
    );
    const found = existing.items.find((item) => item.metadata?.deletionTimestamp === undefined);
    if (found?.metadata?.name !== undefined) return { result: 'unchanged', name: found.metadata.name };
    const created = await this.call({ verb: 'create', kind, namespace }, () =>
      this.api.create(prepared as KubernetesObject, undefined, undefined, FIELD_MANAGER),
    );
    return { result: 'created', name: created.metadata?.name ?? '' };
  }

  /**
   * Creates (POST) a prepared hook object (a PreSync Job…): a new object on every run, whether it has a
   * name (the caller deleted the earlier run first, {@link deleteHook}) or only generateName. Returns the
   * name it got.
   */
  async createHook(prepared: Json): Promise<{ name: string }> {
    const ref = {
      kind: String(prepared.kind),
      namespace: metadataOf(prepared).namespace as string | undefined,
    };
    const created = await kubeCall({ verb: 'create', kind: ref.kind, namespace: ref.namespace }, () =>
      this.api.create(prepared as KubernetesObject, undefined, undefined, FIELD_MANAGER),
    );
    return { name: created.metadata?.name ?? '' };
  }

  /**
   * Deletes a hook's object (its pods with it) when it is this source's (labelled as its own): hooks are
   * not in the inventory, they are re-created on every sync. `not-managed`: another's object of that name.
   */
  async deleteHook(ref: ObjectRef): Promise<RemoveResult> {
    return this.deleteOwn(ref);
  }

  /** Fields where the live object differs from what was applied (ignoring the commit/file bookkeeping). */
  async drift(prepared: Json): Promise<string[] | undefined> {
    const live = await this.read(preparedRefOf(prepared));
    if (!live) return ['(object is missing)'];
    const metadata = metadataOf(prepared);
    const annotations = { ...((metadata.annotations ?? {}) as Json) };
    delete annotations[COMMIT_ANNOTATION];
    delete annotations[COMMIT_AUTHOR_ANNOTATION];
    delete annotations[FILE_ANNOTATION];
    return driftedFields({ ...prepared, metadata: { ...metadata, annotations } }, live);
  }

  /**
   * Deletes an object that left Git, but only one this source applied: in its scope, in its inventory
   * (`inventory`, the keys of {@link inventoryKey}) and labelled as its own. A label alone is not
   * enough: it can be copied, or left by an earlier version that took objects over. `key` is the
   * object's inventory key (absent when its kind is not served).
   */
  async remove(
    ref: ObjectRef,
    inventory: Pick<ReadonlySet<string>, 'has'>,
  ): Promise<{ result: RemoveResult; key?: string }> {
    const apiVersion = String(
      toAppliedApiVersion({ apiVersion: ref.apiVersion }, this.rolloutApiVersion).apiVersion,
    );
    const namespaced = await this.namespacedOf(apiVersion, ref.kind);
    if (namespaced === undefined) return { result: 'absent' };
    const decision = decideScope(this.scope, ref, namespaced);
    const namespace = namespaced ? (ref.namespace ?? this.scope.ownNamespace) : undefined;
    const resolved = { ...ref, apiVersion, ...(namespace ? { namespace } : {}) };
    const key = inventoryKey(resolved);
    if (!decision.allowed || !inventory.has(key)) return { result: 'not-managed', key };
    const result = await this.deleteOwn(resolved);
    return { result, key };
  }

  private async deleteOwn(ref: ObjectRef): Promise<RemoveResult> {
    const { apiVersion, namespace } = ref;
    const live = await this.read(ref);
    if (!live) return 'absent';
    const labels = (metadataOf(live).labels ?? {}) as Json;
    if (labels[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE || labels[SOURCE_LABEL] !== this.options.source)
      return 'not-managed';
    try {
      await this.call({ verb: 'delete', kind: ref.kind, namespace, name: ref.name }, () =>
        this.api.delete(
          { apiVersion, kind: ref.kind, metadata: { name: ref.name, ...(namespace ? { namespace } : {}) } },
          undefined,
          undefined,
          undefined,
          undefined,
          'Background',
        ),
      );
      return 'deleted';
    } catch (err) {
      if (isNotFound(err)) return 'absent';
      throw err;
    }
  }
}
