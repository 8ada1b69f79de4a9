// Canned answers that replace the next API requests of one mounted forge (rate limits, server errors), in order.
import type { ApiResponse } from './forge-double.ts';

export class CannedAnswers {
  private readonly pending: Array<{ remaining: number; answer: () => ApiResponse }> = [];
  /** How many requests got a canned answer. */
  given = 0;

  /** The next `count` requests get `answer()` (built per request, so time-based headers are fresh). */
  queue(count: number, answer: () => ApiResponse): void {
    if (count > 0) this.pending.push({ remaining: count, answer });
  }

  take(): ApiResponse | undefined {
    const next = this.pending[0];
    if (!next) return undefined;
    next.remaining -= 1;
    if (next.remaining <= 0) this.pending.shift();
    this.given += 1;
    return next.answer();
  }

  clear(): void {
    this.pending.length = 0;
  }
}
