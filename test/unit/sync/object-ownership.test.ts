import { describe, expect, it } from 'vitest';
import { decideOwnership } from '../../../src/sync/object-ownership.ts';

const source = (name: string) => ({
  'app.kubernetes.io/managed-by': 'rollgate',
  'rollgate.dev/source': name,
});

describe('decideOwnership', () => {
  const rows = [
    {
      name: 'no live object: created',
      adopt: 'none',
      live: undefined,
      want: { allowed: true, as: 'create' },
    },
    {
      name: 'its own object',
      adopt: 'none',
      live: { labels: source('team-a') },
      want: { allowed: true, as: 'own' },
    },
    {
      name: "another source's object, even with adopt: unowned",
      adopt: 'unowned',
      live: { labels: source('team-b') },
      want: { allowed: false, message: /belongs to source "team-b"/ },
    },
    {
      name: "another source's object, even annotated for adoption",
      adopt: 'none',
      live: { labels: source('team-b'), annotations: { 'rollgate.dev/adopt': 'team-a' } },
      want: { allowed: false, message: /belongs to source "team-b"/ },
    },
    {
      name: 'an object nobody labelled (kube-system/coredns): refused by default',
      adopt: 'none',
      live: { labels: { 'k8s-app': 'kube-dns' } },
      want: { allowed: false, message: /no Rollgate source owns it/ },
    },
    {
      name: 'managed-by rollgate alone is not a source',
      adopt: 'none',
      live: { labels: { 'app.kubernetes.io/managed-by': 'rollgate' } },
      want: { allowed: false, message: /no Rollgate source owns it/ },
    },
    {
      name: 'an unlabelled object with adopt: unowned',
      adopt: 'unowned',
      live: {},
      want: { allowed: true, as: 'adopt' },
    },
    {
      name: 'an unlabelled object handed over to this source by annotation',
      adopt: 'none',
      live: { annotations: { 'rollgate.dev/adopt': 'team-a' } },
      want: { allowed: true, as: 'adopt' },
    },
    {
      name: 'an unlabelled object handed over to another source',
      adopt: 'none',
      live: { annotations: { 'rollgate.dev/adopt': 'team-b' } },
      want: { allowed: false, message: /rollgate\.dev\/adopt: team-a/ },
    },
  ] as const;
  for (const row of rows)
    it(row.name, () => {
      const decision = decideOwnership('team-a', row.adopt, row.live);
      if (row.want.allowed) expect(decision).toEqual(row.want);
      else expect(decision).toEqual({ allowed: false, message: expect.stringMatching(row.want.message) });
    });
});
