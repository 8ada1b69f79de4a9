// A source's health from its objects' (worst first, the unhealthy ones named, capped) and the Healthy
// condition a source object shows for it.
import { describe, expect, it } from 'vitest';
import type { HealthStatus } from '../../../src/health/object-health.ts';
import { aggregateHealth, healthyCondition, MAX_LISTED_OBJECTS } from '../../../src/health/source-health.ts';

const C1 = 'c'.repeat(40);

function object(key: string, status: HealthStatus, message = '') {
  return { key, health: { status, message } };
}

describe('aggregateHealth', () => {
  it('is Healthy with no object, or when every object is', () => {
    expect(aggregateHealth([], C1)).toEqual({ status: 'Healthy', message: '0 objects healthy', commit: C1 });
    expect(
      aggregateHealth([
        object('apps/Deployment/shop/web', 'Healthy'),
        object('/Service/shop/web', 'Healthy'),
      ]),
    ).toEqual({
      status: 'Healthy',
      message: '2 objects healthy',
    });
  });

  it('takes the worst status, names that object first and counts the rest; only unhealthy ones are listed', () => {
    const health = aggregateHealth(
      [
        object('apps/Deployment/shop/web', 'Progressing', '1 of 3 replicas updated'),
        object('/Service/shop/web', 'Healthy'),
        object(
          'batch/Job/shop/migrate',
          'Degraded',
          'BackoffLimitExceeded: Job has reached the specified backoff limit',
        ),
        object('batch/CronJob/shop/report', 'Suspended', 'CronJob is suspended'),
      ],
      C1,
    );
    expect(health).toEqual({
      status: 'Degraded',
      message:
        'Job shop/migrate: Degraded: BackoffLimitExceeded: Job has reached the specified backoff limit (and 2 more not healthy)',
      commit: C1,
      objects: [
        {
          key: 'batch/Job/shop/migrate',
          status: 'Degraded',
          message: 'BackoffLimitExceeded: Job has reached the specified backoff limit',
        },
        { key: 'apps/Deployment/shop/web', status: 'Progressing', message: '1 of 3 replicas updated' },
        { key: 'batch/CronJob/shop/report', status: 'Suspended', message: 'CronJob is suspended' },
      ],
    });
  });

  it.each<[HealthStatus, HealthStatus, HealthStatus]>([
    ['Degraded', 'Missing', 'Degraded'],
    ['Missing', 'Progressing', 'Missing'],
    ['Progressing', 'Suspended', 'Progressing'],
    ['Suspended', 'Unknown', 'Suspended'],
    ['Unknown', 'Healthy', 'Unknown'],
  ])('%s and %s: %s', (a, b, worst) => {
    expect(aggregateHealth([object('/Pod/x/a', a), object('/Pod/x/b', b)]).status).toBe(worst);
    expect(aggregateHealth([object('/Pod/x/b', b), object('/Pod/x/a', a)]).status).toBe(worst);
  });

  it('names a cluster-scoped object without a namespace', () => {
    expect(
      aggregateHealth([
        object(
          'apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com',
          'Progressing',
          'not established',
        ),
      ]).message,
    ).toBe('CustomResourceDefinition widgets.example.com: Progressing: not established');
  });

  it(`lists at most ${MAX_LISTED_OBJECTS} objects; the message counts them all`, () => {
    const many = Array.from({ length: 50 }, (_, i) =>
      object(`/Pod/x/p${String(i).padStart(2, '0')}`, 'Progressing', 'running, not ready'),
    );
    const health = aggregateHealth(many);
    expect(health.objects).toHaveLength(MAX_LISTED_OBJECTS);
    expect(health.message).toBe('Pod x/p00: Progressing: running, not ready (and 49 more not healthy)');
  });
});

describe('healthyCondition', () => {
  it.each([
    [undefined, { status: 'Unknown', reason: 'NotChecked', message: 'health not checked yet' }],
    [
      { status: 'Healthy' as const, message: '3 objects healthy' },
      { status: 'True', reason: 'Healthy', message: '3 objects healthy' },
    ],
    [
      { status: 'Progressing' as const, message: 'Deployment shop/web: …' },
      { status: 'False', reason: 'Progressing', message: 'Deployment shop/web: …' },
    ],
    [
      { status: 'Degraded' as const, message: 'm' },
      { status: 'False', reason: 'Degraded', message: 'm' },
    ],
    [
      { status: 'Missing' as const, message: 'm' },
      { status: 'False', reason: 'Missing', message: 'm' },
    ],
    [
      { status: 'Suspended' as const, message: 'm' },
      { status: 'False', reason: 'Suspended', message: 'm' },
    ],
    [
      { status: 'Unknown' as const, message: 'm' },
      { status: 'Unknown', reason: 'Unknown', message: 'm' },
    ],
  ])('%j → %j', (health, condition) => {
    expect(healthyCondition(health)).toEqual(condition);
  });
});
