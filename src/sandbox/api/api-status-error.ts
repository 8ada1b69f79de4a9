// Kubernetes API errors as the real API server reports them: a `Status` body with reason, code and details.

/** One entry of `Status.details.causes`, as the real API server fills it for 422 and SSA conflicts. */
export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

/** The JSON body of a Kubernetes `Status` (kind Status, apiVersion v1). */
export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  code: number;
}

/** Names the resource an error is about: `plural` (for details.kind) plus `group`, and the `kind` for 422. */
export interface ErrorSubject {
  plural: string;
  group: string;
  kind?: string;
  name?: string;
}

/** Any error the sandbox API server answers with: carries the exact Status body it sends. */
export class ApiStatusError extends Error {
  override readonly name = 'ApiStatusError';
  /** Stable code: `sandbox.api.` + the Status reason (e.g. `sandbox.api.Conflict`). */
  readonly code: string;
  readonly status: StatusBody;

  constructor(status: Omit<StatusBody, 'kind' | 'apiVersion' | 'metadata' | 'status'>) {
    super(status.message);
    this.status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', ...status };
    this.code = `sandbox.api.${status.reason}`;
  }

  get httpStatus(): number {
    return this.status.code;
  }
}

/** `pods` or `replicasets.apps`: how the real server qualifies a resource in messages. */
export function qualifiedResource(subject: ErrorSubject): string {
  return subject.group === '' ? subject.plural : `${subject.plural}.${subject.group}`;
}

function details(subject: ErrorSubject, name: string | undefined): StatusBody['details'] {
  const d: NonNullable<StatusBody['details']> = {};
  if (name !== undefined && name !== '') d.name = name;
  if (subject.group !== '') d.group = subject.group;
  d.kind = subject.plural;
  return d;
}

export function notFound(subject: ErrorSubject, name: string): ApiStatusError {
  return new ApiStatusError({
    message: `${qualifiedResource(subject)} "${name}" not found`,
    reason: 'NotFound',
    details: details(subject, name),
    code: 404,
  });
}

export function alreadyExists(subject: ErrorSubject, name: string): ApiStatusError {
  return new ApiStatusError({
    message: `${qualifiedResource(subject)} "${name}" already exists`,
    reason: 'AlreadyExists',
    details: details(subject, name),
    code: 409,
  });
}

/** The optimistic-concurrency conflict, word for word as kube-apiserver writes it. */
export function conflict(subject: ErrorSubject, name: string): ApiStatusError {
  return new ApiStatusError({
    message:
      `Operation cannot be fulfilled on ${qualifiedResource(subject)} "${name}": the object has been modified; ` +
      'please apply your changes to the latest version and try again',
    reason: 'Conflict',
    details: details(subject, name),
    code: 409,
  });
}

/** A conflict with a free-form cause (e.g. a UID precondition or a namespace being terminated). */
export function conflictWithMessage(subject: ErrorSubject, name: string, why: string): ApiStatusError {
  return new ApiStatusError({
    message: `Operation cannot be fulfilled on ${qualifiedResource(subject)} "${name}": ${why}`,
    reason: 'Conflict',
    details: details(subject, name),
    code: 409,
  });
}

/** Server-side apply found fields owned by other managers and `force` was not set. */
export function applyConflict(
  subject: ErrorSubject,
  name: string,
  message: string,
  conflicts: Array<{ owner: string; field: string }>,
): ApiStatusError {
  return new ApiStatusError({
    message,
    reason: 'Conflict',
    details: {
      ...details(subject, name),
      causes: conflicts.map((c) => ({
        reason: 'FieldManagerConflict',
        message: `conflict with ${c.owner}`,
        field: c.field,
      })),
    },
    code: 409,
  });
}

/** 422 with causes, e.g. `ReplicaSet.apps "web" is invalid: spec.replicas: Invalid value: -1: must be ...`. */
export function invalid(
  subject: ErrorSubject & { kind: string },
  name: string,
  causes: StatusCause[],
): ApiStatusError {
  const groupKind = subject.group === '' ? subject.kind : `${subject.kind}.${subject.group}`;
  const summary = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const joined = summary.length === 1 ? (summary[0] ?? '') : `[${summary.join(', ')}]`;
  const d: NonNullable<StatusBody['details']> = { name };
  if (subject.group !== '') d.group = subject.group;
  d.kind = subject.kind;
  d.causes = causes;
  return new ApiStatusError({
    message: `${groupKind} "${name}" is invalid: ${joined}`,
    reason: 'Invalid',
    details: d,
    code: 422,
  });
}

export function badRequest(message: string): ApiStatusError {
  return new ApiStatusError({ message, reason: 'BadRequest', code: 400 });
}

export function methodNotAllowed(message: string): ApiStatusError {
  return new ApiStatusError({ message, reason: 'MethodNotAllowed', code: 405 });
}

/** 415 for a patch Content-Type the resource does not accept (custom resources take no strategic merge). */
export function unsupportedMediaType(strategicMergeAccepted: boolean): ApiStatusError {
  const accepted = [
    'application/json-patch+json',
    'application/merge-patch+json',
    'application/apply-patch+yaml',
  ];
  if (strategicMergeAccepted) accepted.push('application/strategic-merge-patch+json');
  return new ApiStatusError({
    message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    reason: 'UnsupportedMediaType',
    code: 415,
  });
}

export function unauthorized(): ApiStatusError {
  return new ApiStatusError({ message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
}

/** The watch answer when the requested resourceVersion is older than the retained history. */
export function expired(requested: string, oldest: number): ApiStatusError {
  return new ApiStatusError({
    message: `too old resource version: ${requested} (${oldest})`,
    reason: 'Expired',
    code: 410,
  });
}

export function internalError(message: string): ApiStatusError {
  return new ApiStatusError({
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ reason: '', message }] },
    code: 500,
  });
}
