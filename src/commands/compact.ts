import type { Command } from './types.js';

export const DEFAULT_COMPACT_KEEP = 10;

export function createCompactCommand(): Command {
  return {
    name: 'compact',
    description: 'Summarize older messages into memory, keeping the last N (default 10, 1–100)',
    access: 'managers',
    async run({ session, writes, args, services, inbound }) {
      const n = args ? Number.parseInt(args, 10) : DEFAULT_COMPACT_KEEP;
      if (args && !Number.isFinite(n)) return `"/compact ${args}" — N must be a number of messages to keep, e.g. /compact 10.`;
      const keep = Math.min(100, Math.max(1, n));
      // Over DAILY_TOKEN_BUDGET the summary would be refused: say so, and keep the conversation as it is.
      if (services.budget.blocks(session.id, inbound)) {
        return services.budget.refusal(session.id, 'so nothing was compacted', '/compact needs the model to write the summary, and ');
      }
      const before = session.messages.length;
      const r = await services.compactor.compactNow(writes, keep);
      if (r.kind === 'none') return `Nothing to compact: the session has ${before} message${before === 1 ? '' : 's'} and keeps the last ${keep}.`;
      const memory = r.consolidation?.memoryUpdated ? 'Memory updated.' : r.consolidation?.kind === 'raw-fallback' ? 'The model could not consolidate; the messages were saved to the history log as they are.' : 'History updated.';
      if (r.kind === 'summary') return `Compacted: ${r.removed} messages summarized, last ${r.kept} kept. ${memory}`;
      return `Compacted without a summary (the model was unavailable): ${r.removed} older messages removed, last ${r.kept} kept. ${memory}`;
    },
  };
}
