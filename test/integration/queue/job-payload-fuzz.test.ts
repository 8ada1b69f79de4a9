// Fuzz: random and hostile job payloads on every queue fail with an error naming the field; the worker stays up; nothing runs.
import { Queue, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { InvalidJobPayloadError } from '../../../src/queue/invalid-job-payload-error.ts';
import { parseJobPayload, type PayloadByQueue } from '../../../src/queue/job-payloads.ts';
import { bullPrefix, QUEUE_NAMES, type QueueName } from '../../../src/queue/queue-names.ts';
import { startWorker, type RunningWorker } from '../../../src/queue/start-worker.ts';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';
import { eventually } from '../../support/eventually.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

const SEED = 26;
const rollout = { metadata: { name: 'web', namespace: 'prod', uid: 'u1' }, spec: { replicas: 2 } };

/** One valid payload per queue, as Rollgate writes them. */
const VALID: { [N in QueueName]: PayloadByQueue[N] } = {
  poll: { v: 1, source: 'apps', reason: 'webhook' },
  sync: { v: 1, source: 'apps', commit: 'a'.repeat(40), previousCommit: null, objects: [] },
  reconcile: { v: 1, namespace: 'prod', name: 'web' },
  fleet: { v: 1, namespace: 'rollgate-system', name: 'web' },
  promote: { v: 1, promotion: 'to-prod', namespace: 'staging', name: 'web' },
  revert: { v: 1, source: 'staging', namespace: 'staging', name: 'web', revision: '6d4b9c7f8' },
  notify: {
    v: 1,
    kind: 'delivery',
    key: 'u1|abc|on-rollout-completed|-|hook||done',
    trigger: 'on-rollout-completed',
    namespace: 'prod',
    name: 'web',
    service: 'hook',
    recipient: '',
    template: 'done',
    event: 'u1|abc|on-rollout-completed|-',
    rollout,
  },
};

/** Values an attacker writes into a field: wrong types, huge and hostile strings, prototype keys. */
function hostileValue(random: SeededRandom): unknown {
  const pick = Math.floor(random.next() * 16);
  switch (pick) {
    case 0:
      return Math.floor(random.next() * 1e9) - 5e8;
    case 1:
      return null;
    case 2:
      return true;
    case 3:
      return ['prod', 'web'];
    case 4:
      return JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}');
    case 5:
      return 'x'.repeat(2 * 1024 * 1024);
    case 6:
      return 'web\r\nX-Injected: 1';
    case 7:
      return '../../../etc/passwd';
    case 8:
      return '.attacker.example/steal';
    case 9:
      return '';
    case 10:
      return 'Web_With Spaces';
    case 11:
      return '__proto__';
    case 12:
      return { $gt: '' };
    case 13:
      return 'prod/web\u0000';
    case 14:
      return [JSON.parse('{"__proto__":{"polluted":"yes"}}')];
    default:
      return 1e308 * 10;
  }
}

interface Forged {
  data: unknown;
  /** The field replaced, '' when the whole payload was replaced. */
  field: string;
}

/** A valid payload with one field replaced, a field added, or the payload replaced as a whole. */
function forge(queue: QueueName, random: SeededRandom): Forged {
  const valid = VALID[queue] as unknown as Record<string, unknown>;
  const fields = Object.keys(valid);
  const roll = random.next();
  if (roll < 0.1) return { data: hostileValue(random), field: '' };
  if (roll < 0.2) {
    const data = JSON.parse(`{"__proto__":{"polluted":"yes"},"v":1}`) as Record<string, unknown>;
    return { data: { ...valid, ...data, polluted: hostileValue(random) }, field: '' };
  }
  const field = fields[Math.floor(random.next() * fields.length)] ?? 'v';
  return { data: { ...valid, [field]: hostileValue(random) }, field };
}

describe('parseJobPayload over random and hostile payloads', () => {
  it('returns a payload or throws InvalidJobPayloadError naming the field; never anything else', () => {
    const random = new SeededRandom(SEED);
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const queue = QUEUE_NAMES[i % QUEUE_NAMES.length] as QueueName;
      const { data, field } = forge(queue, random);
      try {
        parseJobPayload(queue, data, `job-${i}`);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidJobPayloadError);
        const invalid = error as InvalidJobPayloadError;
        expect(invalid.code).toBe('rollgate.queue.invalid-payload');
        if (field !== '') expect(invalid.field.split('.')[0]).toBe(field);
        // The error names fields, never echoes a value (a value may be 2 MiB or carry CR/LF).
        expect(invalid.message.length).toBeLessThan(4000);
        expect(invalid.message).not.toContain('X-Injected');
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(1500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('fields that name something', () => {
  const hostileNames = [
    'web\r\nX-Injected: 1',
    'x'.repeat(300),
    '../../etc/passwd',
    '.attacker.example/x',
    'prod/web\u0000',
    '__proto__',
  ];
  it.each([
    ['poll', 'source'],
    ['sync', 'source'],
    ['reconcile', 'namespace'],
    ['reconcile', 'name'],
    ['promote', 'promotion'],
    ['notify', 'service'],
    ['notify', 'template'],
    ['notify', 'trigger'],
  ] as const)('%s.%s refuses CR/LF, NUL, traversal, prototype keys and oversized names', (queue, field) => {
    for (const value of hostileNames) {
      const attempt = (): unknown => parseJobPayload(queue, { ...VALID[queue], [field]: value });
      expect(attempt).toThrow(InvalidJobPayloadError);
      expect(attempt).toThrow(`(field ${field})`);
    }
  });
});

describe('workers over hostile jobs in a real Redis', () => {
  let scope: RedisTestScope;
  const queues = new Map<QueueName, Queue>();
  const workers: RunningWorker[] = [];
  const handled: Array<{ queue: QueueName; payload: unknown }> = [];

  beforeAll(async () => {
    scope = await openRedisTestScope(inject('redisUrl'));
    for (const name of QUEUE_NAMES) {
      queues.set(name, new Queue(name, { connection: scope.connection, prefix: bullPrefix(scope.prefix) }));
      workers.push(
        startWorker(
          name,
          async (payload) => {
            handled.push({ queue: name, payload });
            return { kind: 'done' };
          },
          { connection: scope.connection, prefix: scope.prefix, concurrency: 8 },
        ),
      );
    }
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop({ force: true })));
    await Promise.all([...queues.values()].map((q) => q.close()));
    await scope.cleanup();
  });

  it('fails each invalid job at once, naming the field, runs no handler for it, and keeps working', async () => {
    const random = new SeededRandom(SEED + 1);
    const added: Array<{ queue: QueueName; job: Job; forged: Forged; valid: boolean }> = [];
    for (let i = 0; i < 150; i++) {
      const queue = QUEUE_NAMES[i % QUEUE_NAMES.length] as QueueName;
      const forged = forge(queue, random);
      // A payload BullMQ itself cannot store (a bare number) is not a job anyone can add.
      const stored =
        typeof forged.data === 'object' && forged.data !== null ? forged.data : { v: forged.data };
      // What the worker reads back is the JSON BullMQ stored (Infinity becomes null, and so on).
      const data = JSON.parse(JSON.stringify(stored)) as unknown;
      let valid = true;
      try {
        parseJobPayload(queue, data);
      } catch {
        valid = false;
      }
      const job = await queues.get(queue)!.add('forged', stored);
      added.push({ queue, job, forged: { ...forged, data }, valid });
    }
    // Then one valid job per queue: the workers are still there to run them.
    const last = await Promise.all(QUEUE_NAMES.map((name) => queues.get(name)!.add('valid', VALID[name])));

    await eventually(
      'every job finished',
      async () => {
        const states = await Promise.all([...added.map((a) => a.job), ...last].map((job) => job.getState()));
        return states.every((s) => s === 'completed' || s === 'failed');
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );

    for (const { queue, job, forged, valid } of added) {
      const fresh = (await queues.get(queue)!.getJob(job.id!))!;
      if (valid) {
        expect(await fresh.getState()).toBe('completed');
        continue;
      }
      expect(await fresh.getState()).toBe('failed');
      expect(fresh.attemptsMade).toBeLessThanOrEqual(1);
      expect(fresh.failedReason).toContain(`on queue ${queue} has an invalid payload`);
      if (forged.field !== '') expect(fresh.failedReason).toContain(`(field ${forged.field}`);
    }
    const invalidCount = added.filter((a) => !a.valid).length;
    expect(invalidCount).toBeGreaterThan(100);
    expect(handled).toHaveLength(added.length - invalidCount + QUEUE_NAMES.length);
    for (const name of QUEUE_NAMES)
      expect(handled.filter((h) => h.queue === name).at(-1)?.payload).toEqual(VALID[name]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // ~6 s on a quiet machine (150 jobs added one at a time, each read back); at load 20 and more that
    // passed the default 30 s.
  }, 120_000);
});
