// Health rules for batch/v1 Job and CronJob: a Job is done when its Complete condition says so and failed when
// its Failed condition does; a CronJob is healthy unless suspended (each run is its own Job).
import { booleanAt, conditionOf, describeCondition, integerAt } from '../live-fields.ts';
import type { HealthRule } from '../object-health.ts';

/** Suspended, Failed (with the condition's reason and message), Complete, or still running. */
export const jobHealth: HealthRule = (live) => {
  const failed = conditionOf(live, 'Failed');
  if (failed?.status === 'True') return { status: 'Degraded', message: describeCondition(failed) };
  const complete = conditionOf(live, 'Complete');
  if (complete?.status === 'True') return { status: 'Healthy', message: '' };
  if (booleanAt(live, 'spec', 'suspend') === true)
    return { status: 'Suspended', message: 'Job is suspended' };
  const active = integerAt(live, 'status', 'active') ?? 0;
  const succeeded = integerAt(live, 'status', 'succeeded') ?? 0;
  const failures = integerAt(live, 'status', 'failed') ?? 0;
  const counts = [
    `${active} active`,
    `${succeeded} succeeded`,
    ...(failures > 0 ? [`${failures} failed`] : []),
  ];
  return { status: 'Progressing', message: `running: ${counts.join(', ')}` };
};

/** Suspended when `spec.suspend`; otherwise healthy: the Jobs it starts carry their own health. */
export const cronJobHealth: HealthRule = (live) =>
  booleanAt(live, 'spec', 'suspend') === true
    ? { status: 'Suspended', message: 'CronJob is suspended' }
    : { status: 'Healthy', message: '' };

export const JOB_RULES: ReadonlyArray<readonly [string, HealthRule]> = [
  ['batch/Job', jobHealth],
  ['batch/CronJob', cronJobHealth],
];
