// The sandbox's write audit keeps the newest entries up to its limit, in order, however many writes came.
import { describe, expect, it } from 'vitest';
import { WriteAudit, type WriteAuditEntry } from '../../../src/sandbox/audit/write-audit.ts';

const write = (n: number): WriteAuditEntry => ({
  verb: 'PATCH',
  group: 'apps',
  resource: 'replicasets',
  namespace: 'shop',
  name: `web-${n}`,
  subresource: undefined,
  code: 200,
  resourceVersion: String(n),
  userAgent: undefined,
});

describe('WriteAudit', () => {
  it('keeps every entry up to its limit, oldest first', () => {
    const audit = new WriteAudit(3);
    for (let n = 0; n < 3; n++) audit.record(write(n));
    expect(audit.entries().map((e) => e.name)).toEqual(['web-0', 'web-1', 'web-2']);
  });

  it('keeps the newest `limit` entries past it, at every count (the oldest are dropped first)', () => {
    const audit = new WriteAudit(3);
    for (let n = 0; n < 20; n++) {
      audit.record(write(n));
      const names = audit.entries().map((e) => e.name);
      const first = Math.max(0, n - 2);
      expect(names).toEqual(Array.from({ length: n - first + 1 }, (_, i) => `web-${first + i}`));
    }
  });

  it('hands out a copy, and starts again when cleared', () => {
    const audit = new WriteAudit(3);
    audit.record(write(1));
    audit.entries().push(write(2));
    expect(audit.entries()).toHaveLength(1);
    audit.clear();
    expect(audit.entries()).toEqual([]);
  });
});
