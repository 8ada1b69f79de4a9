// Fault injection settings: what the sandbox does wrong on purpose, applied to HTTP requests only.
import { z } from 'zod';

/** Mutable at run time (in-process, or PUT/PATCH /sandbox/faults). Rates are probabilities in [0, 1]. */
export interface FaultSettings {
  /** Share of write requests (POST/PUT/PATCH/DELETE) answered 409 Conflict without being applied. */
  conflictRate: number;
  /** Share of requests (any verb, watches included) answered 500/503. */
  errorRate: number;
  /** Added delay before every request is handled, in milliseconds (real time). */
  latencyMs: number;
  /** Close every watch connection after this many events (0: never). */
  watchDropAfterEvents: number;
  /** Close every watch connection after this many milliseconds (0: never). */
  watchDropAfterMs: number;
}

export const noFaults: Readonly<FaultSettings> = {
  conflictRate: 0,
  errorRate: 0,
  latencyMs: 0,
  watchDropAfterEvents: 0,
  watchDropAfterMs: 0,
};

const rate = z.number().min(0).max(1);
const nonNegative = z.number().int().min(0);

/** Validates a partial update of the settings (the admin endpoint's body). */
export const faultSettingsPatchSchema = z
  .object({
    conflictRate: rate,
    errorRate: rate,
    latencyMs: nonNegative,
    watchDropAfterEvents: nonNegative,
    watchDropAfterMs: nonNegative,
  })
  .partial()
  .strict();

export type FaultSettingsPatch = z.infer<typeof faultSettingsPatchSchema>;
