/**
 * Token usage and the daily budget. Every accounted LLM call is counted per chat and day in
 * usage.db (usage.ts: the LLM client is given the store's `record` as its usage sink when it is
 * built); DAILY_TOKEN_BUDGET (budget.ts) is the client's gate for background work and the check
 * the intake and /compact make before asking the model; `npm run memory -- usage` prints the
 * table (report.ts). Nothing of it is installed in the pipeline, the router or the registry: its
 * parts are given to the client, the intake, /compact and /status when they are built.
 */
import type { Feature } from '../../turn/feature.js';

export function usageFeature(): Feature {
  return { name: 'usage' };
}
