// The sandbox's audit log of write requests (as kube-apiserver's audit log at level Metadata, writes only).

/** One write request as the API server answered it. */
export interface WriteAuditEntry {
  /** HTTP verb: POST, PUT, PATCH or DELETE. */
  verb: string;
  /** API group ('' for the core group). */
  group: string;
  /** The resource's plural name, e.g. `replicasets`. */
  resource: string;
  namespace: string | undefined;
  /** The object's name: from the URL, or for a create from the answer. */
  name: string | undefined;
  subresource: string | undefined;
  /** The HTTP status code answered. */
  code: number;
  /** The object's resourceVersion in the answer (a write that changed nothing answers the same one again). */
  resourceVersion: string | undefined;
  /** The client's User-Agent header. */
  userAgent: string | undefined;
  /** Who sent it (kube-apiserver's `user.username`): the token's user; absent outside RBAC mode's users. */
  user?: string | undefined;
  /** The user it acted as when the sender impersonated one (kube-apiserver's `impersonatedUser.username`). */
  impersonatedUser?: string | undefined;
}

/** How many entries are kept by default; older ones are dropped first. */
const DEFAULT_LIMIT = 50_000;

/** A bounded, in-order record of the write requests served. */
export class WriteAudit {
  private log: WriteAuditEntry[] = [];

  constructor(private readonly limit = DEFAULT_LIMIT) {}

  record(entry: WriteAuditEntry): void {
    this.log.push(entry);
    // Dropped in one go once twice the limit is held: dropping the oldest on every write moved the
    // whole log each time, a tenth of the sandbox's CPU at 10,000 rollouts.
    if (this.log.length >= 2 * this.limit) this.log = this.log.slice(-this.limit);
  }

  /** The entries kept (the last `limit` at most), oldest first (a copy). */
  entries(): WriteAuditEntry[] {
    return this.log.length > this.limit ? this.log.slice(-this.limit) : [...this.log];
  }

  clear(): void {
    this.log = [];
  }
}
