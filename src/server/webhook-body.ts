// Reading webhook bodies before they are authenticated: bounded per body, per sender and in total.
import { createHash, createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { receivedBody, type ReceivedBody } from './signature.ts';

const MiB = 1024 * 1024;

/** How much unauthenticated input the webhook server holds at once. */
export interface WebhookBodyLimits {
  /** Largest body accepted (413 past it). */
  maxBodyBytes: number;
  /** Bodies being received at once, from everyone (503 past it). */
  maxBodies: number;
  /** Bodies being received at once from one remote address (503 past it). */
  maxBodiesPerAddress: number;
  /** Bytes held by bodies being received, from everyone (503 past it). */
  maxBufferedBytes: number;
}

/**
 * 1 MiB a body (ours are refs only; GitHub caps its own at 25 MB); 64 bodies at once, 16 of them from
 * one address, 32 MiB held in all. Before these, 300 connections each holding 700 KB of a body that is
 * never signed grew the process by 210 MB; now they cost at most 32 MiB and the rest are refused at once.
 */
export const DEFAULT_WEBHOOK_BODY_LIMITS: WebhookBodyLimits = {
  maxBodyBytes: MiB,
  maxBodies: 64,
  maxBodiesPerAddress: 16,
  maxBufferedBytes: 32 * MiB,
};

/**
 * Why a body was not read: `too-large` is answered 413, `busy` 503 with Retry-After, and `gone` (the
 * sender closed the connection first) not at all.
 */
export type BodyRefusal = 'too-large' | 'busy' | 'gone';

/** A body read whole: its bytes, its HMAC (streamed) and its SHA-256 (for replay detection). */
export interface WebhookBody {
  body: ReceivedBody;
  sha256Hex: string;
}

export type BodyRead = { ok: true; value: WebhookBody } | { ok: false; refusal: BodyRefusal };

/**
 * Counts the bodies being received and the bytes they hold, so that connections that send part of a
 * body and stall (or a flood of them) cannot make the process hold more than the limits allow.
 */
export class WebhookBodyGate {
  private bodies = 0;
  private bytes = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(readonly limits: WebhookBodyLimits = DEFAULT_WEBHOOK_BODY_LIMITS) {}

  /** Bodies and bytes held right now (for metrics and tests). */
  get held(): { bodies: number; bytes: number } {
    return { bodies: this.bodies, bytes: this.bytes };
  }

  /**
   * Reads `req`'s body into memory and into an HMAC under `signingSecret` (when the provider signs) as
   * it arrives, or refuses it: `too-large` past the body limit, `busy` when the sender or everyone
   * already has as many bodies in flight as allowed, or the bytes held would pass the total. A refused
   * body is not read further (the caller answers and closes the connection).
   */
  async read(req: IncomingMessage, signingSecret: string | undefined): Promise<BodyRead> {
    const { maxBodyBytes, maxBodies, maxBodiesPerAddress, maxBufferedBytes } = this.limits;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) return { ok: false, refusal: 'too-large' };
    const address = req.socket.remoteAddress ?? 'unknown';
    const fromAddress = this.byAddress.get(address) ?? 0;
    if (this.bodies >= maxBodies || fromAddress >= maxBodiesPerAddress) return { ok: false, refusal: 'busy' };
    if (Number.isFinite(declared) && this.bytes + declared > maxBufferedBytes)
      return { ok: false, refusal: 'busy' };
    this.bodies += 1;
    this.byAddress.set(address, fromAddress + 1);
    const hmac = signingSecret ? createHmac('sha256', signingSecret) : undefined;
    const digest = createHash('sha256');
    const chunks: Buffer[] = [];
    let held = 0;
    // Events rather than `for await`: leaving that loop early destroys the request, and with it the
    // socket the refusal must still be answered on.
    return new Promise((resolve) => {
      const finish = (result: BodyRead): void => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onGone);
        req.off('close', onGone);
        this.bytes -= held;
        this.bodies -= 1;
        const left = (this.byAddress.get(address) ?? 1) - 1;
        if (left > 0) this.byAddress.set(address, left);
        else this.byAddress.delete(address);
        if (!result.ok) {
          chunks.length = 0;
          req.pause();
        }
        resolve(result);
      };
      const onData = (chunk: Buffer): void => {
        if (held + chunk.length > maxBodyBytes) return finish({ ok: false, refusal: 'too-large' });
        if (this.bytes + chunk.length > maxBufferedBytes) return finish({ ok: false, refusal: 'busy' });
        held += chunk.length;
        this.bytes += chunk.length;
        hmac?.update(chunk);
        digest.update(chunk);
        chunks.push(chunk);
      };
      const onEnd = (): void => {
        const raw = Buffer.concat(chunks, held);
        const streamed =
          hmac !== undefined && signingSecret
            ? { secret: signingSecret, hex: hmac.digest('hex') }
            : undefined;
        finish({ ok: true, value: { body: receivedBody(raw, streamed), sha256Hex: digest.digest('hex') } });
      };
      const onGone = (): void => finish({ ok: false, refusal: 'gone' });
      req.on('data', onData);
      req.once('end', onEnd);
      req.once('error', onGone);
      req.once('close', onGone);
    });
  }
}
