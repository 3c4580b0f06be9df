import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, parseRetryAfter, sleep, withRetry, type RetryDecision, type RetryOptions } from '../../src/core/retry.js';
import { patient } from '../helpers/wait.js';

test('parseRetryAfter reads seconds', () => {
  assert.equal(parseRetryAfter('1'), 1000);
  assert.equal(parseRetryAfter('0'), 0);
  assert.equal(parseRetryAfter('2.5'), 2500);
  assert.equal(parseRetryAfter('120'), 120_000);
});

test('parseRetryAfter reads an HTTP date relative to now', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
  assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', now), 30_000);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:20:00 GMT', now), 0, 'a date in the past means now');
});

test('parseRetryAfter gives undefined for nothing or nonsense', () => {
  assert.equal(parseRetryAfter(undefined), undefined);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter(''), undefined);
  assert.equal(parseRetryAfter('soon'), undefined);
});

/** Runs withRetry over a function that fails `failures` times, recording sleeps and attempts. */
async function run(
  failures: number,
  decision: RetryDecision,
  opts: Partial<RetryOptions> = {},
): Promise<{ result: unknown; error: unknown; attempts: number; sleeps: number[]; retried: number[] }> {
  let attempts = 0;
  const sleeps: number[] = [];
  const retried: number[] = [];
  let result: unknown;
  let error: unknown;
  try {
    result = await withRetry(
      async (attempt) => {
        attempts++;
        assert.equal(attempt, attempts, 'attempt numbers count from 1');
        if (attempt <= failures) throw new Error(`fail ${attempt}`);
        return 'done';
      },
      {
        retries: 3,
        classify: () => decision,
        sleep: async (ms) => {
          sleeps.push(ms);
        },
        random: () => 0.5,
        onRetry: ({ attempt }) => retried.push(attempt),
        ...opts,
      },
    );
  } catch (err) {
    error = err;
  }
  return { result, error, attempts, sleeps, retried };
}

test('withRetry returns the first success', async () => {
  const r = await run(2, { retry: true });
  assert.equal(r.result, 'done');
  assert.equal(r.attempts, 3);
  assert.equal(r.sleeps.length, 2);
  assert.deepEqual(r.retried, [1, 2]);
});

test('withRetry stops after `retries` retries and throws the last error', async () => {
  const r = await run(99, { retry: true }, { retries: 3 });
  assert.equal(r.attempts, 4);
  assert.equal((r.error as Error).message, 'fail 4');
  assert.equal(r.sleeps.length, 3);

  const none = await run(99, { retry: true }, { retries: 0 });
  assert.equal(none.attempts, 1);
  assert.equal(none.sleeps.length, 0);
});

test('withRetry does not retry what classify says not to', async () => {
  const r = await run(99, { retry: false });
  assert.equal(r.attempts, 1);
  assert.equal((r.error as Error).message, 'fail 1');
  assert.deepEqual(r.sleeps, []);
});

test('withRetry waits exactly retryAfterMs when the server gives it', async () => {
  const r = await run(2, { retry: true, retryAfterMs: 1234 });
  assert.equal(r.result, 'done');
  assert.deepEqual(r.sleeps, [1234, 1234]);
  const zero = await run(1, { retry: true, retryAfterMs: 0 });
  assert.deepEqual(zero.sleeps, [0], 'retry-after: 0 means retry now, not backoff');
});

test('withRetry refuses to wait for a retry-after above maxRetryAfterMs', async () => {
  const r = await run(99, { retry: true, retryAfterMs: 5001 }, { maxRetryAfterMs: 5000 });
  assert.equal(r.attempts, 1);
  assert.deepEqual(r.sleeps, []);
  assert.equal((r.error as Error).message, 'fail 1');

  const atLimit = await run(1, { retry: true, retryAfterMs: 5000 }, { maxRetryAfterMs: 5000 });
  assert.equal(atLimit.result, 'done');
  assert.deepEqual(atLimit.sleeps, [5000]);

  const defaultLimit = await run(99, { retry: true, retryAfterMs: 3_600_000 });
  assert.equal(defaultLimit.attempts, 1, 'the default limit does not wait an hour');
});

test('backoff doubles per attempt and is capped', async () => {
  const high = await run(99, { retry: true }, { retries: 6, baseDelayMs: 100, maxDelayMs: 1000, random: () => 1 });
  assert.deepEqual(high.sleeps, [100, 200, 400, 800, 1000, 1000]);
  const low = await run(99, { retry: true }, { retries: 6, baseDelayMs: 100, maxDelayMs: 1000, random: () => 0 });
  assert.deepEqual(low.sleeps, [50, 100, 200, 400, 500, 500], 'jitter never goes below half the step');
});

test('backoffDelay stays within [step/2, step] whatever the random value', () => {
  for (let attempt = 1; attempt <= 10; attempt++) {
    const step = Math.min(8000, 500 * 2 ** (attempt - 1));
    for (const r of [0, 0.25, 0.5, 0.999]) {
      const d = backoffDelay(attempt, 500, 8000, () => r);
      assert.ok(d >= step / 2 && d <= step, `attempt ${attempt}, random ${r}: ${d} not in [${step / 2}, ${step}]`);
    }
  }
});

test('withRetry stops retrying once its signal is aborted', async () => {
  const ac = new AbortController();
  let attempts = 0;
  await assert.rejects(
    withRetry(
      async () => {
        attempts++;
        if (attempts === 2) ac.abort();
        throw new Error(`fail ${attempts}`);
      },
      { retries: 5, classify: () => ({ retry: true }), signal: ac.signal, sleep: async () => undefined },
    ),
    /fail 2/,
  );
  assert.equal(attempts, 2);
});

test('sleep waits, and rejects as soon as its signal aborts', async () => {
  const t0 = performance.now();
  await sleep(30);
  assert.ok(performance.now() - t0 >= 25);

  const ac = new AbortController();
  const p = sleep(10_000, ac.signal);
  setTimeout(() => ac.abort(new Error('stop')), 10);
  const t1 = performance.now();
  await assert.rejects(p, /stop/);
  assert.ok(performance.now() - t1 < patient(1_000), 'not the 10 s sleep');
});
