/**
 * Waiting in tests: on the event that matters (a log line, a request at the fake LLM, a reply in
 * the emulator), never for a fixed time. A wait's deadline is only a safety net that turns a hang
 * into a failure naming what never came, so it may be generous: a wait that succeeds returns as
 * soon as its condition holds, whatever the deadline.
 *
 * Deadlines are sized for an idle machine and multiplied by MEMBOT_TEST_PATIENCE (default 3): on
 * the shared 2-core machine at load ~20 the daemon took 8–15 s from spawn to "daemon started"
 * (about 2 s idle), and fixed 15–20 s windows counted from the spawn failed with nothing wrong.
 * A slower machine or CI sets a larger factor; nothing else changes.
 */

/** The factor every deadline of the tests is multiplied by. */
export const PATIENCE = patienceFrom(process.env.MEMBOT_TEST_PATIENCE);

function patienceFrom(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 3;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`MEMBOT_TEST_PATIENCE must be a positive number, not ${JSON.stringify(raw)}`);
  return n;
}

/** A deadline of `ms` on an idle machine, scaled for this one. */
export function patient(ms: number): number {
  return Math.round(ms * PATIENCE);
}

/** How often a condition is looked at. */
const POLL_MS = 15;

/**
 * Waits until `cond` holds (it may read files: a promise is awaited), or fails naming `what`
 * after `timeoutMs` (an idle machine's figure, scaled by `patient`).
 */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const limit = patient(timeoutMs);
  const end = Date.now() + limit;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${limit} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
