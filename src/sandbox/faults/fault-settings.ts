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
  /**
   * Writes to these object paths answered with this 5xx every time (not by chance): a server that
   * keeps refusing one object for a reason of its own, as kube-apiserver answers server-side apply of
   * a Service port without `protocol` with a 500, while other objects are written.
   */
  refuseWrites: RefusedWrite[];
}

/** One object whose writes (POST/PUT/PATCH/DELETE) are refused with the same server error. */
export interface RefusedWrite {
  /** The request path, e.g. `/api/v1/namespaces/apps/services/web` (a create's collection path for POST). */
  path: string;
  /** 500–599. */
  code: number;
  /** The Status `message` of every answer. */
  message: string;
}

export const noFaults: Readonly<FaultSettings> = {
  conflictRate: 0,
  errorRate: 0,
  latencyMs: 0,
  watchDropAfterEvents: 0,
  watchDropAfterMs: 0,
  refuseWrites: [],
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
    refuseWrites: z.array(
      z
        .object({
          path: z.string().startsWith('/'),
          code: z.number().int().min(500).max(599),
          message: z.string().min(1),
        })
        .strict(),
    ),
  })
  .partial()
  .strict();

export type FaultSettingsPatch = z.infer<typeof faultSettingsPatchSchema>;
