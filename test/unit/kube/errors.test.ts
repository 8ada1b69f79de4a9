// Error mapping: every ApiException code and network failure lands on the right typed error.
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  dispositionOf,
  isNamespaceTerminating,
  isNotFound,
  kubeCall,
  KubeApiError,
  KubeConflictError,
  KubeForbiddenError,
  KubeGoneError,
  KubeInvalidError,
  KubeNamespaceTerminatingError,
  KubeNotFoundError,
  KubeThrottledError,
  KubeTransientError,
  toKubeError,
} from '../../../src/kube/errors.ts';

const request = { verb: 'patch', kind: 'ReplicaSet', namespace: 'ns', name: 'web-abc' } as const;

function apiError(
  code: number,
  body: object | string,
  headers: Record<string, string> = {},
): ApiException<unknown> {
  return new ApiException(
    code,
    'Unknown API Status Code!',
    typeof body === 'string' ? body : JSON.stringify(body),
    headers,
  );
}

describe('toKubeError', () => {
  it('maps a 403 for a namespace being deleted to kube.namespace_terminating, not a missing permission', () => {
    const err = toKubeError(
      apiError(403, {
        kind: 'Status',
        status: 'Failure',
        reason: 'Forbidden',
        message:
          'replicasets.apps "web-abc" is forbidden: unable to create new content in namespace ns because it is being terminated',
        details: {
          name: 'web-abc',
          group: 'apps',
          kind: 'replicasets',
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: 'namespace ns is being terminated',
              field: 'metadata.namespace',
            },
          ],
        },
        code: 403,
      }),
      request,
    );
    expect(err).toBeInstanceOf(KubeNamespaceTerminatingError);
    expect(err).toMatchObject({ code: 'kube.namespace_terminating', disposition: 'notFound', status: 403 });
    expect(isNamespaceTerminating(err)).toBe(true);
    // A 403 with any other cause is a permission problem.
    const rbac = toKubeError(apiError(403, { kind: 'Status', reason: 'Forbidden', message: 'no' }), request);
    expect(rbac).toMatchObject({ code: 'kube.forbidden' });
    expect(isNamespaceTerminating(rbac)).toBe(false);
  });

  const rows: Array<{ status: number; code: string; disposition: string; type: typeof KubeApiError }> = [
    { status: 404, code: 'kube.not_found', disposition: 'notFound', type: KubeNotFoundError },
    { status: 409, code: 'kube.conflict', disposition: 'conflict', type: KubeConflictError },
    { status: 410, code: 'kube.gone', disposition: 'conflict', type: KubeGoneError },
    { status: 422, code: 'kube.invalid', disposition: 'stalled', type: KubeInvalidError },
    { status: 400, code: 'kube.invalid', disposition: 'stalled', type: KubeInvalidError },
    { status: 415, code: 'kube.invalid', disposition: 'stalled', type: KubeInvalidError },
    { status: 418, code: 'kube.invalid', disposition: 'stalled', type: KubeInvalidError },
    { status: 401, code: 'kube.forbidden', disposition: 'stalled', type: KubeForbiddenError },
    { status: 403, code: 'kube.forbidden', disposition: 'stalled', type: KubeForbiddenError },
    { status: 429, code: 'kube.throttled', disposition: 'transient', type: KubeThrottledError },
    { status: 408, code: 'kube.transient', disposition: 'transient', type: KubeTransientError },
    { status: 500, code: 'kube.transient', disposition: 'transient', type: KubeTransientError },
    { status: 503, code: 'kube.transient', disposition: 'transient', type: KubeTransientError },
  ];
  for (const row of rows) {
    it(`maps HTTP ${row.status} to ${row.code}`, () => {
      const err = toKubeError(
        apiError(row.status, { kind: 'Status', reason: 'R', message: 'm' }),
        request,
      ) as KubeApiError;
      expect(err.code).toBe(row.code);
      expect(err.disposition).toBe(row.disposition);
      expect(dispositionOf(err)).toBe(row.disposition);
      expect(err.status).toBe(row.status);
      expect(err.request).toEqual(request);
      // Callers match with instanceof as well as by code; the name is what a log line shows.
      expect(err).toBeInstanceOf(row.type);
      expect(err).toBeInstanceOf(KubeApiError);
      expect(err).toBeInstanceOf(Error);
      expect(err.name).toBe(row.type.name);
      expect(isNotFound(err)).toBe(row.status === 404);
    });
  }

  it('keeps the API server message and the object in the error text', () => {
    const err = toKubeError(
      apiError(409, {
        kind: 'Status',
        status: 'Failure',
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on replicasets.apps "web-abc": the object has been modified; please apply your changes to the latest version and try again',
      }),
      request,
    );
    expect(err.message).toContain('patch ReplicaSet/ns/web-abc');
    expect(err.message).toContain('the object has been modified');
    expect(err.name).toBe('KubeConflictError');
  });

  it('reads retry-after from the Status details or the header on 429', () => {
    const fromBody = toKubeError(
      apiError(429, { reason: 'TooManyRequests', details: { retryAfterSeconds: 3 } }),
      request,
    );
    expect(fromBody).toMatchObject({ code: 'kube.throttled', retryAfterMs: 3000 });
    const fromHeader = toKubeError(apiError(429, 'slow down', { 'Retry-After': '2' }), request);
    expect(fromHeader).toMatchObject({ code: 'kube.throttled', retryAfterMs: 2000 });
  });

  it('treats refused and reset connections (also nested as fetch causes) as transient', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const wrapped = new TypeError('fetch failed', { cause: refused });
    const err = toKubeError(wrapped, request) as KubeApiError;
    expect(err.code).toBe('kube.transient');
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('passes programming errors through unchanged', () => {
    const bug = new TypeError('x is undefined');
    expect(toKubeError(bug, request)).toBe(bug);
  });

  it('kubeCall rethrows the mapped error', async () => {
    await expect(
      kubeCall(request, () => Promise.reject(apiError(404, { reason: 'NotFound', message: 'gone' }))),
    ).rejects.toMatchObject({ code: 'kube.not_found' });
  });
});
