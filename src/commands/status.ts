import type { Command } from './types.js';
import { buildRequestMessages } from '../llm/messages.js';
import { contextLimit } from '../services.js';

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return [d ? `${d}d` : '', h ? `${h}h` : '', m ? `${m}m` : '', `${sec}s`].filter(Boolean).join(' ');
}

export function createStatusCommand(): Command {
  return {
    name: 'status',
    description: 'Show session size, context use, model and timings',
    async run({ session, services }) {
      const { tokens, llm, stats, model } = services;
      const last = stats.lastTurn(session.id);
      const systemPrompt = last?.systemPrompt ?? '';
      const used = tokens.countMessages(buildRequestMessages(systemPrompt, session.messages)) + tokens.countTools(services.tools.definitions());
      const limit = contextLimit(services);
      const pct = ((used / limit) * 100).toFixed(1);
      const lines = [
        '📊 Status',
        `Session: ${session.id} (${session.state})`,
        `Messages in session: ${session.messages.length}`,
        `Context: ${used.toLocaleString('en-US')} / ${limit.toLocaleString('en-US')} tokens (${pct}%) — ${tokens.mode === 'exact' ? `exact, ${tokens.encoding}` : 'estimated (chars / 3.5)'}`,
        `Limit: min(model input ${model.maxInputTokens.toLocaleString('en-US')}${model.matched ? '' : ' — model not in the catalogue, default'}, compaction.maxContextTokens ${services.runtime.get().compaction.maxContextTokens.toLocaleString('en-US')})`,
        `Model: ${llm.modelFor('default')}`,
        `Uptime: ${formatDuration(Date.now() - stats.startedAt)}`,
      ];
      if (last?.memory) {
        const m = last.memory;
        lines.push(`Memory block: ${m.tokens.toLocaleString('en-US')} tokens (budget ${m.budget.toLocaleString('en-US')})`);
        if (m.drops.length > 0) lines.push(`Memory trimmed to fit: ${m.drops.map((d) => `${d.what} (${d.tokens} tokens)`).join('; ')}`);
      } else if (last) {
        lines.push('Memory block: empty');
      }
      if (last) {
        const parts = last.timings.map((t) => `${t.system} ${t.outcome === 'skipped' ? 'skipped' : `${t.ms.toFixed(1)}ms`}${t.outcome === 'failed' ? ' (failed)' : ''}`);
        lines.push(`Last turn: ${parts.join(' · ')}`);
      } else {
        lines.push('Last turn: none yet');
      }
      return lines.join('\n');
    },
  };
}
