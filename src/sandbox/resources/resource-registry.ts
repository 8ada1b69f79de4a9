// The set of resources the sandbox serves: built-in kinds plus every version of every CRD applied to it.
import type { PrinterColumn, ResourceType } from './resource-type.ts';
import { BUILTIN_RESOURCE_TYPES } from './resource-type.ts';
import { compileCrdSchema, CrdSchemaError, type SchemaNode } from '../validation/crd-schema.ts';

/** The parts of a CustomResourceDefinition the registry reads (validated loosely: a CRD is user input). */
interface CrdShape {
  metadata?: { name?: string };
  spec?: {
    group?: string;
    scope?: string;
    preserveUnknownFields?: boolean;
    names?: {
      kind?: string;
      plural?: string;
      singular?: string;
      listKind?: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions?: Array<{
      name?: string;
      served?: boolean;
      storage?: boolean;
      subresources?: {
        status?: unknown;
        scale?: { specReplicasPath?: string; statusReplicasPath?: string; labelSelectorPath?: string };
      };
      additionalPrinterColumns?: PrinterColumn[];
      schema?: { openAPIV3Schema?: unknown };
    }>;
  };
}

/**
 * A version's schema, compiled; undefined when absent or unreadable (a pattern JavaScript cannot compile),
 * and then that version's objects are stored unchecked, as before schemas were enforced.
 */
function readSchema(openAPIV3Schema: unknown): SchemaNode | undefined {
  if (openAPIV3Schema === undefined || openAPIV3Schema === null) return undefined;
  try {
    return compileCrdSchema(openAPIV3Schema);
  } catch (err) {
    if (err instanceof CrdSchemaError) return undefined;
    throw err;
  }
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/** Kubernetes' version priority: GA, then beta, then alpha, higher numbers first; other names last, by name. */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = KUBE_VERSION.exec(v);
    if (!m) return undefined;
    const stability = m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0;
    return [stability, Number(m[1]), Number(m[3] ?? 0)];
  };
  const ra = rank(a);
  const rb = rank(b);
  if (!ra || !rb) return ra ? -1 : rb ? 1 : a.localeCompare(b);
  return rb[0] - ra[0] || rb[1] - ra[1] || rb[2] - ra[2];
}

/** A group as discovery lists it. */
export interface ServedGroup {
  name: string;
  versions: string[];
  preferredVersion: string;
}

/** Resolves URLs and kinds to resource types; CRDs add and remove entries at run time. */
export class ResourceRegistry {
  private readonly types: ResourceType[] = [...BUILTIN_RESOURCE_TYPES];

  /** The type served at /apis/{group}/{version}/{plural} (or /api/v1/{plural}). */
  byPlural(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  /** The type of a kind at an exact version. */
  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.version === version && t.kind === kind);
  }

  /** Any served version of a group/kind (for owner lookups, which carry apiVersion but may differ). */
  anyVersionOfKind(group: string, kind: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.kind === kind);
  }

  /** A kind the sandbox always serves (Pod, ReplicaSet, …); its absence is a sandbox bug. */
  builtIn(group: string, kind: string): ResourceType {
    const type = this.anyVersionOfKind(group, kind);
    if (!type) throw new Error(`sandbox: built-in kind ${group}/${kind} missing`);
    return type;
  }

  all(): readonly ResourceType[] {
    return this.types;
  }

  /** Resource types of one group version, in registration order. */
  inGroupVersion(group: string, version: string): ResourceType[] {
    return this.types.filter((t) => t.group === group && t.version === version);
  }

  /**
   * Non-core groups with their versions in Kubernetes' version priority (v1 before v1beta1 before v1alpha1),
   * the first preferred, as kube-apiserver orders the versions CRDs serve (a CRD's storage version does not
   * matter: ReferenceGrant stores v1beta1 and v1 is preferred).
   */
  groups(): ServedGroup[] {
    const byName = new Map<string, ServedGroup>();
    for (const t of this.types) {
      if (t.group === '') continue;
      const g = byName.get(t.group) ?? { name: t.group, versions: [], preferredVersion: t.version };
      if (!g.versions.includes(t.version)) g.versions.push(t.version);
      byName.set(t.group, g);
    }
    return [...byName.values()].map((g) => {
      const versions = [...g.versions].sort(compareKubeVersions);
      return { ...g, versions, preferredVersion: versions[0] ?? g.preferredVersion };
    });
  }

  /** Serves every `served` version of a CRD (replacing what an earlier version of the CRD served). */
  registerCrd(crd: unknown): ResourceType[] {
    const shape = crd as CrdShape;
    const name = shape.metadata?.name ?? '';
    this.unregisterCrd(name);
    const spec = shape.spec;
    const names = spec?.names;
    if (!spec?.group || !names?.kind || !names.plural) return [];
    const added: ResourceType[] = [];
    const versions = [...(spec.versions ?? [])].sort(
      (a, b) => Number(b.storage ?? false) - Number(a.storage ?? false),
    );
    for (const v of versions) {
      if (!v.name || v.served === false) continue;
      const type: ResourceType = {
        group: spec.group,
        version: v.name,
        kind: names.kind,
        listKind: names.listKind ?? `${names.kind}List`,
        plural: names.plural,
        singular: names.singular ?? names.kind.toLowerCase(),
        namespaced: spec.scope !== 'Cluster',
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        statusSubresource: v.subresources?.status !== undefined && v.subresources.status !== null,
        tracksGeneration: true,
        printerColumns: v.additionalPrinterColumns ?? [],
        crdName: name,
      };
      const schema = readSchema(v.schema?.openAPIV3Schema);
      if (schema) type.schema = schema;
      if (spec.preserveUnknownFields === true) type.preserveUnknownFields = true;
      const scale = v.subresources?.scale;
      if (scale?.specReplicasPath && scale.statusReplicasPath) {
        type.scale = {
          specReplicasPath: scale.specReplicasPath,
          statusReplicasPath: scale.statusReplicasPath,
          ...(scale.labelSelectorPath ? { labelSelectorPath: scale.labelSelectorPath } : {}),
        };
      }
      this.types.push(type);
      added.push(type);
    }
    return added;
  }

  /** Stops serving a CRD's resources; returns what was removed. */
  unregisterCrd(crdName: string): ResourceType[] {
    const removed = this.types.filter((t) => t.crdName === crdName);
    for (const t of removed) this.types.splice(this.types.indexOf(t), 1);
    return removed;
  }
}
