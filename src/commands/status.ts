import type { Command } from './types.js';
import { buildRequestMessages } from '../llm/messages.js';

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
      const limit = model.maxInputTokens;
      const pct = ((used / limit) * 100).toFixed(1);
      const lines = [
        '📊 Status',
        `Session: ${session.id} (${session.state})`,
        `Messages in session: ${session.messages.length}`,
        `Context: ${used.toLocaleString('en-US')} / ${limit.toLocaleString('en-US')} tokens (${pct}%) — ${tokens.mode === 'exact' ? `exact, ${tokens.encoding}` : 'estimated (chars / 3.5)'}`,
        `Model: ${llm.modelFor('default')}${model.matched ? '' : ' (not in the catalogue; default limit)'}`,
        `Uptime: ${formatDuration(Date.now() - stats.startedAt)}`,
      ];
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
