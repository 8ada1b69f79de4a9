// What a notification service may call besides HTTP: SMTP and the clock, injected so tests drive both.
import { systemClock } from '../../clock/clock.ts';
import { smtpMailCall, type MailCall } from './mail-call.ts';

/** The calls a sender makes besides HTTP (the worker passes the process clock). */
export interface ServiceCalls {
  mail: MailCall;
  /** Timestamps a service wants (Alertmanager's startsAt/endsAt, a GitHub App token's JWT). */
  now(): Date;
}

export const DEFAULT_SERVICE_CALLS: ServiceCalls = { mail: smtpMailCall, now: () => systemClock.now() };
