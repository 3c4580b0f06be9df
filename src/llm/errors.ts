/**
 * Maps what the openai SDK throws onto our codes, keeping "the remote said no" (an HTTP status)
 * apart from "couldn't reach the remote" (connection, timeout). Retry decisions come from here.
 */
import OpenAI from 'openai';
import { AppError, type ErrorCode } from '../core/errors.js';
import { parseRetryAfter, type RetryDecision } from '../core/retry.js';

export type LlmFailureKind = 'rejected' | 'unreachable';

/** The codes of LLM failures; their template is the failure's own description. */
export type LlmErrorCode = Extract<ErrorCode, `llm.${string}`>;

export class LlmError extends AppError<LlmErrorCode> {
  readonly kind: LlmFailureKind;
  readonly status: number | undefined;
  constructor(code: LlmErrorCode, kind: LlmFailureKind, message: string, status?: number, cause?: unknown) {
    super(code, { detail: message }, { cause });
    this.name = 'LlmError';
    this.kind = kind;
    this.status = status;
  }
}

const CONTEXT_PATTERNS = /context[_ ]length|maximum context|context window|too many tokens|prompt is too long|reduce the length/i;

export function isContextLengthError(err: unknown): boolean {
  if (err instanceof LlmError) return err.code === 'llm.context_length_exceeded';
  if (err instanceof OpenAI.APIError) {
    return err.code === 'context_length_exceeded' || ((err.status === 400 || err.status === 413) && CONTEXT_PATTERNS.test(err.message));
  }
  return false;
}

/** Retry on 408/409/429/5xx and on connection failures; never on other 4xx. */
export function classifyLlmError(err: unknown): RetryDecision {
  if (err instanceof OpenAI.APIUserAbortError) return { retry: false };
  if (err instanceof OpenAI.APIConnectionError) return { retry: true };
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const s = err.status;
    if (s === 408 || s === 409 || s === 429 || s >= 500) {
      const h = err.headers;
      const msHeader = Number(h?.get('retry-after-ms') ?? NaN);
      const retryAfterMs = Number.isFinite(msHeader) ? msHeader : parseRetryAfter(h?.get('retry-after'));
      return { retry: true, retryAfterMs };
    }
  }
  return { retry: false };
}

/** Turns any failure of an LLM call into an LlmError with a stable code. */
export function toLlmError(err: unknown, timedOut: boolean): LlmError {
  if (err instanceof LlmError) return err;
  if (timedOut || err instanceof OpenAI.APIConnectionTimeoutError) {
    return new LlmError('llm.timeout', 'unreachable', 'the LLM server did not answer in time', undefined, err);
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return new LlmError('llm.unreachable', 'unreachable', `could not reach the LLM server: ${err.message}`, undefined, err);
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    if (isContextLengthError(err)) {
      return new LlmError('llm.context_length_exceeded', 'rejected', `the request is too long for the model: ${err.message}`, err.status, err);
    }
    const code = err.status === 429 ? 'llm.rate_limited' : 'llm.rejected';
    return new LlmError(code, 'rejected', `the LLM server answered ${err.status}: ${err.message}`, err.status, err);
  }
  if (err instanceof SyntaxError || (err instanceof OpenAI.OpenAIError && !(err instanceof OpenAI.APIError))) {
    // The server answered, but not with something we can read: its fault, not the network's.
    return new LlmError('llm.bad_response', 'rejected', `the LLM server sent an answer that could not be read: ${(err as Error).message}`, undefined, err);
  }
  return new LlmError('llm.unreachable', 'unreachable', `LLM call failed: ${(err as Error)?.message ?? String(err)}`, undefined, err);
}

/**
 * The server refused a request that carried an image (a 4xx other than the key, the model's
 * name, the rate or the length): most likely it takes no images, or not this one, whatever the
 * catalogue or LLM_VISION says. The tool loop then asks once more without it.
 */
export function refusedImage(err: unknown): err is LlmError {
  if (!(err instanceof LlmError) || err.code !== 'llm.rejected' || err.status === undefined) return false;
  return err.status >= 400 && err.status < 500 && ![401, 403, 404].includes(err.status);
}

/** A 4xx whose text says the server does not have, or will not serve, the model (servers word it differently). */
const MODEL_REFUSED =
  /\bmodel\b[^\n]{0,120}?\b(not found|does not exist|doesn't exist|not exist|decommissioned|do(?:es)? not have access|no access|not a valid model)|\b(unknown|invalid|unsupported) model\b/i;

/**
 * The model or its server failed, not the request: the same request may well succeed with
 * another model (LLM_FALLBACK). Called after the retries gave up: a 5xx, a timeout, a lost
 * connection, a 429 past its budget, an answer that could not be read, or a refusal of the model
 * itself (401/403/404, or a 4xx saying the model is unknown). Never for a request the server
 * refused as such (400, 413, 422 …): another model would refuse it too, and "too long" is
 * compaction's to handle. Nor for a call the daily budget stopped.
 */
export function fallsOver(err: unknown): boolean {
  if (!(err instanceof LlmError)) return false;
  switch (err.code) {
    case 'llm.timeout':
    case 'llm.unreachable':
    case 'llm.rate_limited':
    case 'llm.bad_response':
      return true;
    case 'llm.rejected': {
      const s = err.status;
      if (s === undefined || s >= 500 || [401, 403, 404, 408, 409].includes(s)) return true;
      const cause = err.cause as { code?: unknown } | undefined;
      return cause?.code === 'model_not_found' || MODEL_REFUSED.test(err.message);
    }
    default:
      return false;
  }
}
