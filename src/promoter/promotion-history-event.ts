// The Kubernetes Event a promotion's pull request leaves on the source Rollout, written and read back here only.
import { webLink } from '../forge/web-link.ts';
import type { EventInput } from '../kube/event-recorder.ts';

/** What happened to a promotion's pull request. */
export type PromotionHistoryKind = 'opened' | 'merged' | 'closed';

/** One entry of a promotion's history, as the dashboard shows it. */
export interface PromotionHistoryEntry {
  promotion: string;
  /** `namespace/name` of the source Rollout. */
  rollout: string;
  event: PromotionHistoryKind;
  pullRequest: { number: number; url?: string };
  /** When it last happened (the Event's last timestamp). */
  at?: string;
}

const REASONS: Record<PromotionHistoryKind, string> = {
  opened: 'PromotionPullRequestOpened',
  merged: 'PromotionPullRequestMerged',
  closed: 'PromotionPullRequestClosed',
};

// The message carries the fields in a fixed order, so a reader needs no second store and a human reads it as is.
const MESSAGE = /^promotion (\S+): pull request #(\d+) (opened|merged|closed)(?: (\S+))?$/;

/** The Event for one pull-request change of a promotion. */
export function promotionHistoryEvent(
  promotion: string,
  event: PromotionHistoryKind,
  pullRequest: { number: number; url?: string },
): EventInput {
  const link = webLink(pullRequest.url);
  const url = link !== undefined ? ` ${link}` : '';
  return {
    type: 'Normal',
    reason: REASONS[event],
    message: `promotion ${promotion}: pull request #${pullRequest.number} ${event}${url}`,
  };
}

/** The Warning a promotion leaves when it refuses a healthy revision that is not what Git holds. */
export function promotionRefusedEvent(promotion: string, reason: string): EventInput {
  return { type: 'Warning', reason: 'PromotionRefused', message: `promotion ${promotion}: ${reason}` };
}

/** Reads an Event back; undefined for any Event this module did not write. */
export function readPromotionHistoryEvent(event: {
  reason?: string;
  message?: string;
  rollout: string;
  at?: string;
}): PromotionHistoryEntry | undefined {
  const kind = (Object.keys(REASONS) as PromotionHistoryKind[]).find((k) => REASONS[k] === event.reason);
  const match = MESSAGE.exec(event.message ?? '');
  if (kind === undefined || match === null || match[3] !== kind) return undefined;
  // Anyone who may create Events in the namespace can write one with this reason: its link is read as
  // strictly as a forge's answer.
  const url = webLink(match[4]);
  return {
    promotion: match[1] ?? '',
    rollout: event.rollout,
    event: kind,
    pullRequest: { number: Number(match[2]), ...(url !== undefined ? { url } : {}) },
    ...(event.at ? { at: event.at } : {}),
  };
}

/** Whether an Event reason is one of the promotion history's. */
export function isPromotionHistoryReason(reason: string | undefined): boolean {
  return Object.values(REASONS).includes(reason ?? '');
}
