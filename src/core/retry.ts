/**
 * The one retry policy for every remote we call (the LLM, Telegram): exponential backoff with
 * full jitter and a cap, and the server's own `retry-after` wins when it gives one.
 */
export interface RetryDecision {
  retry: boolean;
  /** The server asked us to wait this long (ms) before the next try. */
  retryAfterMs?: number | undefined;
}

export interface RetryOptions {
  /** Retries after the first attempt. */
  retries: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A retry-after longer than this is not waited for: the error is raised instead. */
  maxRetryAfterMs?: number;
  classify: (err: unknown) => RetryDecision;
  onRetry?: (info: { attempt: number; delayMs: number; err: unknown }) => void;
  signal?: AbortSignal | undefined;
  /** Replaceable for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Parses `retry-after` (seconds or HTTP date) and `retry-after-ms` into milliseconds. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(value);
  if (Number.isFinite(at)) return Math.max(0, at - now);
  return undefined;
}

export function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number): number {
  // Full jitter: spreads retries of many clients so they do not hit the server in step.
  const exp = Math.min(capMs, baseMs * 2 ** (attempt - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

export async function withRetry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const base = opts.baseDelayMs ?? 500;
  const cap = opts.maxDelayMs ?? 8_000;
  const maxRetryAfter = opts.maxRetryAfterMs ?? 60_000;
  const doSleep = opts.sleep ?? sleep;
  const random = opts.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt > opts.retries || opts.signal?.aborted) throw err;
      const d = opts.classify(err);
      if (!d.retry) throw err;
      if (d.retryAfterMs !== undefined && d.retryAfterMs > maxRetryAfter) throw err;
      const delayMs = d.retryAfterMs ?? backoffDelay(attempt, base, cap, random);
      opts.onRetry?.({ attempt, delayMs, err });
      await doSleep(delayMs, opts.signal);
    }
  }
}
