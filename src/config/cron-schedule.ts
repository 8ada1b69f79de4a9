// A cron schedule and time zone as the config accepts them (promotion merge windows).
import { CronExpressionParser } from 'cron-parser';

/** Why a schedule or time zone is refused (the config layer puts it under the key). */
export function scheduleProblem(schedule: string, timeZone: string | undefined): string | undefined {
  // cron-parser accepts four fields (and six, with seconds) silently: the five a user means are checked here.
  if (schedule.trim().split(/\s+/).length !== 5)
    return `"${schedule}" must have five fields (minute hour day-of-month month day-of-week)`;
  if (timeZone !== undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone });
    } catch {
      return `"${timeZone}" is not a time zone (an IANA name such as Europe/Paris)`;
    }
  }
  try {
    CronExpressionParser.parse(schedule, { currentDate: new Date(0), tz: timeZone ?? 'UTC', strict: false })
      .next()
      .getTime();
  } catch (error) {
    return `"${schedule}" is not a cron schedule: ${error instanceof Error ? error.message : String(error)}`;
  }
  return undefined;
}
