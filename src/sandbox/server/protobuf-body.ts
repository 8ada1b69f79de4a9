// Decodes the protobuf request bodies `kubectl create namespace|configmap|secret|serviceaccount|token|role|
// clusterrole|rolebinding|clusterrolebinding` sends.
// Only these simple kinds are understood; everything else is answered 415 by the caller.

/** The Kubernetes protobuf envelope prefix: "k8s" and a zero byte. */
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Field = { no: number; wire: number; value: Buffer | bigint };

function readVarint(buf: Buffer, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[pos];
    if (byte === undefined) throw new Error('truncated varint');
    pos++;
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, next] = readVarint(buf, pos);
    pos = next;
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [v, p] = readVarint(buf, pos);
      out.push({ no, wire, value: v });
      pos = p;
    } else if (wire === 2) {
      const [len, p] = readVarint(buf, pos);
      const end = p + Number(len);
      if (end > buf.length) throw new Error('truncated field');
      out.push({ no, wire, value: buf.subarray(p, end) });
      pos = end;
    } else if (wire === 1) {
      pos += 8;
    } else if (wire === 5) {
      pos += 4;
    } else {
      throw new Error(`unsupported wire type ${wire}`);
    }
  }
  return out;
}

const str = (f: Field): string => (Buffer.isBuffer(f.value) ? f.value.toString('utf8') : String(f.value));
const bytes = (f: Field): Buffer => (Buffer.isBuffer(f.value) ? f.value : Buffer.alloc(0));

function mapEntry(f: Field): [string, Buffer] {
  let key = '';
  let value: Buffer = Buffer.alloc(0);
  for (const e of fields(bytes(f))) {
    if (e.no === 1) key = str(e);
    else if (e.no === 2) value = bytes(e);
  }
  return [key, value];
}

function objectMeta(buf: Buffer): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  const finalizers: string[] = [];
  for (const f of fields(buf)) {
    if (f.no === 1) meta.name = str(f);
    else if (f.no === 2) meta.generateName = str(f);
    else if (f.no === 3) meta.namespace = str(f);
    else if (f.no === 6) meta.resourceVersion = str(f);
    else if (f.no === 11) {
      const [k, v] = mapEntry(f);
      labels[k] = v.toString('utf8');
    } else if (f.no === 12) {
      const [k, v] = mapEntry(f);
      annotations[k] = v.toString('utf8');
    } else if (f.no === 14) finalizers.push(str(f));
  }
  for (const [key, value] of [
    ['labels', labels],
    ['annotations', annotations],
  ] as const) {
    if (Object.keys(value).length > 0) meta[key] = value;
  }
  if (finalizers.length > 0) meta.finalizers = finalizers;
  for (const key of ['name', 'generateName', 'namespace', 'resourceVersion'])
    if (meta[key] === '') delete meta[key];
  return meta;
}

/** `kubectl create token`'s TokenRequestSpec: audiences (1) and expirationSeconds (4); the bound object is not read. */
function tokenRequestSpec(buf: Buffer): Record<string, unknown> {
  const audiences: string[] = [];
  const spec: Record<string, unknown> = {};
  for (const f of fields(buf)) {
    if (f.no === 1) audiences.push(str(f));
    else if (f.no === 4 && typeof f.value === 'bigint')
      spec.expirationSeconds = Number(BigInt.asIntN(64, f.value));
  }
  if (audiences.length > 0) spec.audiences = audiences;
  return spec;
}

/** rbac/v1 PolicyRule: verbs (1), apiGroups (2), resources (3), resourceNames (4), nonResourceURLs (5). */
function policyRule(buf: Buffer): Record<string, string[]> {
  const names = ['', 'verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'];
  const rule: Record<string, string[]> = {};
  for (const f of fields(buf)) {
    const name = names[f.no];
    if (name) rule[name] = [...(rule[name] ?? []), str(f)];
  }
  return rule;
}

/** rbac/v1 Subject (kind 1, apiGroup 2, name 3, namespace 4) and RoleRef (apiGroup 1, kind 2, name 3). */
function stringFields(buf: Buffer, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields(buf)) {
    const name = names[f.no];
    if (name && str(f) !== '') out[name] = str(f);
  }
  return out;
}

/** `kubectl create role|clusterrole|rolebinding|clusterrolebinding`: rules, or subjects and roleRef. */
function decodeRbac(kind: string, raw: Buffer): Record<string, unknown> {
  const obj: Record<string, unknown> = {};
  const binding = kind.endsWith('Binding');
  for (const f of fields(raw)) {
    if (f.no === 1) obj.metadata = objectMeta(bytes(f));
    else if (!binding && f.no === 2) obj.rules = [...((obj.rules as unknown[]) ?? []), policyRule(bytes(f))];
    else if (binding && f.no === 2)
      obj.subjects = [
        ...((obj.subjects as unknown[]) ?? []),
        stringFields(bytes(f), ['', 'kind', 'apiGroup', 'name', 'namespace']),
      ];
    else if (binding && f.no === 3) obj.roleRef = stringFields(bytes(f), ['', 'apiGroup', 'kind', 'name']);
  }
  if (!binding && obj.rules === undefined) obj.rules = [];
  return obj;
}

const RBAC_KINDS = ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'];

function decodeKind(kind: string, raw: Buffer): Record<string, unknown> | undefined {
  if (RBAC_KINDS.includes(kind)) return decodeRbac(kind, raw);
  const obj: Record<string, unknown> = {};
  const data: Record<string, string> = {};
  const stringData: Record<string, string> = {};
  for (const f of fields(raw)) {
    if (f.no === 1) obj.metadata = objectMeta(bytes(f));
    else if (kind === 'ConfigMap' && f.no === 2) {
      const [k, v] = mapEntry(f);
      data[k] = v.toString('utf8');
    } else if (kind === 'ConfigMap' && f.no === 3) {
      const [k, v] = mapEntry(f);
      obj.binaryData = { ...(obj.binaryData as object), [k]: v.toString('base64') };
    } else if (kind === 'Secret' && f.no === 2) {
      const [k, v] = mapEntry(f);
      data[k] = v.toString('base64');
    } else if (kind === 'Secret' && f.no === 3) obj.type = str(f);
    else if (kind === 'Secret' && f.no === 4) {
      const [k, v] = mapEntry(f);
      stringData[k] = v.toString('utf8');
    } else if ((kind === 'ConfigMap' && f.no === 4) || (kind === 'Secret' && f.no === 5))
      obj.immutable = f.value === 1n;
    else if (kind === 'TokenRequest' && f.no === 2) obj.spec = tokenRequestSpec(bytes(f));
  }
  if (!['ConfigMap', 'Secret', 'Namespace', 'ServiceAccount', 'TokenRequest'].includes(kind))
    return undefined;
  if (Object.keys(data).length > 0) obj.data = data;
  if (Object.keys(stringData).length > 0) obj.stringData = stringData;
  return obj;
}

/**
 * Decodes a `application/vnd.kubernetes.protobuf` body into JSON for the kinds kubectl's `create`
 * generators send without a manifest; undefined when the kind is not one of those (or not decodable).
 */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> | undefined {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  try {
    let apiVersion = '';
    let kind = '';
    let raw: Buffer = Buffer.alloc(0);
    for (const f of fields(body.subarray(MAGIC.length))) {
      if (f.no === 1) {
        for (const t of fields(bytes(f))) {
          if (t.no === 1) apiVersion = str(t);
          else if (t.no === 2) kind = str(t);
        }
      } else if (f.no === 2) raw = bytes(f);
    }
    const obj = decodeKind(kind, raw);
    return obj ? { apiVersion, kind, ...obj } : undefined;
  } catch {
    return undefined;
  }
}
