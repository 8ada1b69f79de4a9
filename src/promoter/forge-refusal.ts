// When a forge refuses a promotion's token or repository: hold every look of that promotion for a while,
// doubling, instead of asking again on each rollout event (the answer will not change until someone fixes it).
import { ForgeError } from '../forge/forge-error.ts';

/** The first hold after a refusal; each refusal after a hold doubles it, up to {@link LONGEST_HOLD_MS}. */
export const FIRST_HOLD_MS = 60_000;
export const LONGEST_HOLD_MS = 3_600_000;

/** One promotion's refusal: how often in a row, and until when nothing is asked. */
export interface Refusal {
  failures: number;
  holdUntil: number;
  reason: string;
}

/** A refusal that holds the whole promotion: its token (401/403) or its repository (404). */
export function isForgeRefusal(error: unknown): error is ForgeError {
  return (
    error instanceof ForgeError && (error.code === 'forge.unauthorized' || error.code === 'forge.not_found')
  );
}

/** The refusals of one process's promotions, by promotion name. */
export class ForgeRefusals {
  private readonly byPromotion = new Map<string, Refusal>();

  /** The hold in force for `promotion` at `now`, if any. */
  holding(promotion: string, now: number): Refusal | undefined {
    const refusal = this.byPromotion.get(promotion);
    return refusal !== undefined && now < refusal.holdUntil ? refusal : undefined;
  }

  /** Records a refusal seen at `now` and returns the hold it starts. */
  refuse(promotion: string, reason: string, now: number): Refusal {
    const failures = (this.byPromotion.get(promotion)?.failures ?? 0) + 1;
    const hold = Math.min(LONGEST_HOLD_MS, FIRST_HOLD_MS * 2 ** (failures - 1));
    const refusal = { failures, holdUntil: now + hold, reason };
    this.byPromotion.set(promotion, refusal);
    return refusal;
  }

  /** A look that reached the forge without a refusal ends the hold. */
  clear(promotion: string): void {
    this.byPromotion.delete(promotion);
  }
}
