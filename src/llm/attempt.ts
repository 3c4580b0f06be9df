/**
 * One request to a model's server as every call of client.ts makes it: each try under a hard
 * timeout of our own that covers the whole response (the SDK's stops at the headers), retried by
 * the one retry helper (core/retry.ts, honouring retry-after), a turn's abort ending it at once,
 * and whatever failed mapped to an LlmError with a stable code.
 */
import type { Logger } from '../core/log.js';
import { withRetry } from '../core/retry.js';
import { LlmError, classifyLlmError, toLlmError } from './errors.js';

/** One attempt per try, each under a hard timeout; failures mapped to LlmError. */
export async function callLlm<T>(fn: (signal: AbortSignal) => Promise<T>, timeoutMs: number, retries: number, log: Logger, outer?: AbortSignal): Promise<T> {
  return withRetry(
    async () => {
      const ac = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        ac.abort();
      }, timeoutMs);
      const stop = () => ac.abort();
      outer?.addEventListener('abort', stop, { once: true });
      if (outer?.aborted) ac.abort();
      try {
        return await fn(ac.signal);
      } catch (err) {
        // Keep the raw error for classification; a timeout of ours looks like a user abort.
        if (timedOut) throw toLlmError(err, true);
        throw err;
      } finally {
        clearTimeout(timer);
        outer?.removeEventListener('abort', stop);
      }
    },
    {
      signal: outer,
      retries,
      classify: (err) => (err instanceof LlmError ? { retry: err.code === 'llm.timeout' } : classifyLlmError(err)),
      onRetry: ({ attempt, delayMs, err }) => log.warn({ attempt, delayMs, code: toLlmError(err, false).code }, 'LLM call failed, retrying'),
    },
  ).catch((err: unknown) => {
    throw toLlmError(err, false);
  });
}
