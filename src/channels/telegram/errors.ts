/**
 * What a failed Bot API call tells us. Telegraf raises `TelegramError` when the server
 * answered (its code and description: "the API said no"), and node-fetch errors when the
 * network failed. For a message that must not arrive twice the question that matters is
 * whether the request may have reached Telegram:
 *
 * - the server answered 429 or an error status: it did not take the message → safe to resend;
 * - the connection was never made (refused, DNS, unreachable): nothing was sent → safe to resend;
 * - a timeout, a reset or a cut connection after the request went out, a 504 (the gateway gave
 *   up waiting for Telegram), a body we could not read: Telegram may have delivered it
 *   → "uncertain", never resent.
 */
import { TelegramError } from 'telegraf';
import { AppError, type ErrorCode } from '../../core/errors.js';
import './error-codes.js';
import { parseRetryAfter, type RetryDecision } from '../../core/retry.js';

/** Network errors raised before any byte of the request could reach the server. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

export interface TelegramFailure extends RetryDecision {
  /** The request may have been carried out by Telegram although we saw no success. */
  uncertain: boolean;
  /** HTTP-ish status when Telegram answered. */
  status?: number | undefined;
  description?: string | undefined;
}

export function isTelegramError(err: unknown): err is TelegramError {
  return err instanceof TelegramError || (typeof err === 'object' && err !== null && (err as { name?: string }).name === 'TelegramError');
}

function networkCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; errno?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.errno ?? e?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isAbort(err: unknown): boolean {
  const e = err as { name?: string; type?: string } | null;
  return e?.name === 'AbortError' || e?.type === 'aborted';
}

/**
 * Classifies a failure for `withRetry`. `idempotent` calls (getUpdates, getMe, chat actions)
 * may be repeated after an uncertain failure; a sendMessage may not.
 */
export function classifyTelegramFailure(err: unknown, idempotent: boolean): TelegramFailure {
  if (isTelegramError(err)) {
    const status = err.code;
    const description = err.description;
    if (status === 429) {
      const ra = err.parameters?.retry_after;
      return { retry: true, retryAfterMs: parseRetryAfter(ra === undefined ? undefined : String(ra)) ?? 1000, uncertain: false, status, description };
    }
    if (status === 504) return { retry: idempotent, uncertain: !idempotent, status, description };
    // Other 5xx: Telegram (or its front) answered that it failed; the message was not taken.
    if (status >= 500) return { retry: true, uncertain: false, status, description };
    return { retry: false, uncertain: false, status, description };
  }
  const code = networkCode(err);
  if (code && NOT_SENT_CODES.has(code)) return { retry: true, uncertain: false };
  return { retry: idempotent && !isAbort(err), uncertain: true };
}

/** Telegram refused the HTML formatting of a message (so the same text can go as plain text). */
export function isFormattingRejected(err: unknown): boolean {
  if (!isTelegramError(err) || err.code !== 400) return false;
  return /can't parse entities|can't find end tag|unsupported start tag|unexpected end tag/i.test(err.description ?? '');
}

/** An edit that would change nothing (Telegram answers 400 "message is not modified"): it is already shown. */
export function isNotModified(err: unknown): boolean {
  return isTelegramError(err) && err.code === 400 && /message is not modified/i.test(err.description ?? '');
}

/** The stable error an unrecoverable Bot API failure is raised as. */
export function toTelegramAppError(err: unknown, what: string): AppError {
  const f = classifyTelegramFailure(err, true);
  let code: ErrorCode = 'telegram.unreachable';
  if (f.status === 401 || f.status === 404) code = 'telegram.unauthorized';
  else if (f.status === 409) code = 'telegram.conflict';
  else if (f.status === 429) code = 'telegram.rate_limited';
  else if (f.status !== undefined) code = 'telegram.rejected';
  const detail = f.status !== undefined ? `${f.status} ${f.description ?? ''}`.trim() : ((err as Error)?.message ?? String(err));
  return new AppError(code, { what, detail }, { cause: err });
}

/** A short, token-free description of a failure for log lines. */
export function describeError(err: unknown): string {
  const e = err as { code?: unknown; description?: string; message?: string } | null;
  if (e && typeof e.code === 'number' && e.description) return `${e.code} ${e.description}`;
  return e?.message ?? String(err);
}
