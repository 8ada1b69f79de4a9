// Which ConfigMaps and Secrets a pod template names: what a pod of it needs to start, and so what must not be pruned under it.

/** The names one pod template uses, each list sorted and without repeats. */
export interface PodTemplateReferences {
  configMaps: string[];
  secrets: string[];
}

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.map(record) : [];
}

function addName(into: Set<string>, value: unknown): void {
  if (typeof value === 'string' && value !== '') into.add(value);
}

/**
 * Volume sources that name a Secret by `secretRef.name` (the storage drivers that log in with one). A
 * pod whose volume cannot be mounted does not start, the same as a missing `secret` volume.
 */
const SECRET_REF_VOLUMES = ['cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos'];

function volumeReferences(volume: Json, configMaps: Set<string>, secrets: Set<string>): void {
  addName(configMaps, record(volume.configMap).name);
  addName(secrets, record(volume.secret).secretName);
  for (const source of list(record(volume.projected).sources)) {
    addName(configMaps, record(source.configMap).name);
    addName(secrets, record(source.secret).name);
  }
  addName(secrets, record(record(volume.csi).nodePublishSecretRef).name);
  addName(secrets, record(volume.azureFile).secretName);
  for (const kind of SECRET_REF_VOLUMES) addName(secrets, record(record(volume[kind]).secretRef).name);
}

function containerReferences(container: Json, configMaps: Set<string>, secrets: Set<string>): void {
  for (const env of list(container.env)) {
    const from = record(env.valueFrom);
    addName(configMaps, record(from.configMapKeyRef).name);
    addName(secrets, record(from.secretKeyRef).name);
  }
  for (const from of list(container.envFrom)) {
    addName(configMaps, record(from.configMapRef).name);
    addName(secrets, record(from.secretRef).name);
  }
}

/**
 * The ConfigMaps and Secrets a pod template (`spec.template` of a ReplicaSet, Deployment or Rollout)
 * names: volumes (`configMap`, `secret`, `projected` sources, the Secret a CSI or storage driver logs in
 * with), `env[].valueFrom`, `envFrom` of every container, init container and ephemeral container, and
 * `imagePullSecrets`. An `optional: true` reference counts too: a pod started without it runs without
 * the data it was written for. Anything that is not a pod template names nothing.
 */
export function podTemplateReferences(template: unknown): PodTemplateReferences {
  const spec = record(record(template).spec);
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const volume of list(spec.volumes)) volumeReferences(volume, configMaps, secrets);
  for (const field of ['containers', 'initContainers', 'ephemeralContainers'])
    for (const container of list(spec[field])) containerReferences(container, configMaps, secrets);
  for (const pullSecret of list(spec.imagePullSecrets)) addName(secrets, pullSecret.name);
  return { configMaps: [...configMaps].sort(), secrets: [...secrets].sort() };
}
