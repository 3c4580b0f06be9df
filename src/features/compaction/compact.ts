import type { Command } from '../../turn/command.js';
import type { InboundMessage } from '../../core/message.js';
import type { AutoCompactor } from '../../turn/auto-compact.js';

export const DEFAULT_COMPACT_KEEP = 10;

export interface CompactDeps {
  /** DAILY_TOKEN_BUDGET (features/usage/budget.ts): the summary needs the model, so it is refused over the budget. */
  budget: {
    blocks(chat: string, msg: Pick<InboundMessage, 'channel' | 'userId' | 'username'>): Promise<boolean>;
    refusal(chat: string, outcome?: string, lead?: string): Promise<string>;
  };
  compactor: Pick<AutoCompactor, 'compactNow'>;
}

export function createCompactCommand(deps: CompactDeps): Command {
  return {
    name: 'compact',
    description: 'Summarize older messages into memory, keeping the last N (default 10, 1–100)',
    access: 'managers',
    async run({ session, writes, args, inbound }) {
      const n = args ? Number.parseInt(args, 10) : DEFAULT_COMPACT_KEEP;
      if (args && !Number.isFinite(n)) return `"/compact ${args}" — N must be a number of messages to keep, e.g. /compact 10.`;
      const keep = Math.min(100, Math.max(1, n));
      // Over DAILY_TOKEN_BUDGET the summary would be refused: say so, and keep the conversation as it is.
      if (await deps.budget.blocks(session.id, inbound)) {
        return deps.budget.refusal(session.id, 'so nothing was compacted', '/compact needs the model to write the summary, and ');
      }
      const before = session.messages.length;
      const r = await deps.compactor.compactNow(writes, keep);
      if (r.kind === 'none') return `Nothing to compact: the session has ${before} message${before === 1 ? '' : 's'} and keeps the last ${keep}.`;
      // No consolidation: what would leave was saved by an earlier one, nothing new to say.
      const c = r.consolidation;
      const memory = !c
        ? ''
        : c.memoryUpdated
          ? ' Memory updated.'
          : c.kind === 'raw-fallback'
            ? ' The model could not consolidate; the messages were saved to the history log as they are.'
            : ' History updated.';
      if (r.kind === 'summary') return `Compacted: ${r.removed} messages summarized, last ${r.kept} kept.${memory}`;
      // Without a summary only messages that matter less go: instructions, and errors with their
      // corrections, stay (memory/importance.ts). When they are all that is older, nothing went.
      if (r.removed === 0)
        return `Nothing removed: the model was unavailable for a summary, and without one I keep instructions and errors with their corrections, which is all the older messages are.${memory} Try /compact again later.`;
      return `Compacted without a summary (the model was unavailable): ${r.removed} older messages removed, last ${r.kept} kept.${memory}`;
    },
  };
}
