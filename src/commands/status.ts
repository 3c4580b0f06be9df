/**
 * /status: the chat's figures. Managers (commands/router.ts: owners, group admins where allowed,
 * anyone in their own private chat) get the operator's view — session, context, tokens by role,
 * tokenizer, memory block, timings; a group member gets the short one: model, memory on or off,
 * the conversation's size and today's tokens against the budget.
 */
import type { Command } from './types.js';
import { isManager } from './router.js';
import { toApiMessage } from '../llm/messages.js';
import { THRESHOLD } from '../turn/auto-compact.js';
import { setAsideCopies } from '../storage/sqlite.js';
import { isTopic } from '../core/group.js';
import { chatModel } from '../services/services.js';
import { visionLabel } from './model.js';
import type { TurnRecord } from '../turn/stats.js';

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return [d ? `${d}d` : '', h ? `${h}h` : '', m ? `${m}m` : '', `${sec}s`].filter(Boolean).join(' ');
}

const fmt = (n: number) => n.toLocaleString('en-US');

type StatusServices = Parameters<Command['run']>[0]['services'];

/** The budget's share used today; the budget counts a forum topic's whole group (usage/budget.ts). */
function budgetUse(services: StatusServices, chat: string): { used: number; pct: string } | null {
  const { budget } = services;
  if (!budget.enabled) return null;
  const used = budget.usedToday(chat);
  return { used, pct: `${Math.min(100, (used / budget.limit!) * 100).toFixed(1)}%` };
}

/** Today's tokens of the chat (usage.db): answers and background apart, and the cached share. */
function tokensTodayLine(services: StatusServices, chat: string): string {
  const { all, answers, background } = services.usage.day(chat);
  const cached = all.promptTokens > 0 ? ` · ${((all.cachedTokens / all.promptTokens) * 100).toFixed(1)}% of prompt tokens cached` : '';
  const use = budgetUse(services, chat);
  const limit = !use
    ? ''
    : isTopic(chat)
      ? ` · daily budget ${fmt(services.budget.limit!)} for the whole group (${fmt(use.used)} used by its topics together, ${use.pct})`
      : ` · daily budget ${fmt(services.budget.limit!)} (${use.pct} used)`;
  return `Tokens today: ${fmt(all.total)} (answers ${fmt(answers.total)}, background ${fmt(background.total)}; prompt ${fmt(all.promptTokens)}, completion ${fmt(all.completionTokens)})${cached}${limit}`;
}

/** "gpt-4.1 · reads images", the chat's model as it answers now. */
function modelText(services: StatusServices, session: Parameters<Command['run']>[0]['session']): string {
  const m = chatModel(services, session);
  return `${m.name} · ${visionLabel(m.info.vision)}`;
}

/** Who wrote the last answer: "Last answer by llama3 (fallback from gpt-4.1)". */
function lastAnswerText(last: TurnRecord | undefined): string | undefined {
  const by = last?.answeredBy;
  if (!by) return undefined;
  return `Last answer by ${by.model}${by.fallbackFrom ? ` (fallback from ${by.fallbackFrom}, which failed)` : ''}`;
}

/** A group member's /status: what the chat runs on and how much of today's budget is left, no operator internals. */
function shortStatus(services: StatusServices, session: Parameters<Command['run']>[0]['session']): string {
  const chat = session.id;
  const mine = services.usage.day(chat).all.total;
  const use = budgetUse(services, chat);
  const tokens = isTopic(chat) ? `${fmt(mine)} in this topic, ${fmt(services.usage.groupDay(chat).total)} in the group` : fmt(mine);
  const budget = !use ? ' (no daily budget)' : `${isTopic(chat) ? ', of its' : ' of the'} daily budget of ${fmt(services.budget.limit!)} (${use.pct})`;
  return [
    '📊 Status',
    `Model: ${modelText(services, session)}`,
    ...[lastAnswerText(services.stats.lastTurn(chat))].filter((l): l is string => l !== undefined),
    `Memory: ${services.runtime.get().memory.enabled ? 'on' : 'off'}`,
    `Messages: ${session.messages.length} in this conversation, ${fmt(session.metadata.messagesReceived)} received in this chat`,
    `Tokens today: ${tokens}${budget}`,
    "The full status is for the bot's owner.",
  ].join('\n');
}

export function createStatusCommand(): Command {
  return {
    name: 'status',
    description: 'Show session size, context use, compactions, model and timings',
    access: 'everyone',
    async run({ session, services, inbound, role }) {
      if (!isManager(role)) return shortStatus(services, session);
      const { llm, stats, runtime } = services;
      const last = stats.lastTurn(session.id);
      // The chat's own model: its limit, tokenizer and images (/model), else LLM_MODEL's.
      const { tokens, info: model, name } = chatModel(services, session);
      const chosen = session.metadata.model !== undefined && name !== llm.modelFor('default');
      const fallbacks = llm.chainFor(name).slice(1);
      const { tokens: used, reserved, limit } = services.compactor.usage(session);
      const pct = ((used / limit) * 100).toFixed(1);
      const reservedPct = ((reserved / limit) * 100).toFixed(1);
      const byRole: Record<string, number> = { system: last?.systemPromptTokens ?? 0, user: 0, assistant: 0, tool: 0 };
      for (const m of session.messages) byRole[m.role] = (byRole[m.role] ?? 0) + tokens.countMessages([toApiMessage(m)]) - 3;
      const toolDefs = tokens.countTools(services.tools.definitions());
      const meta = session.metadata;
      const lines = [
        '📊 Status',
        `Session: ${session.id} (${session.state})`,
        `Messages: ${session.messages.length} in session, ${fmt(meta.messagesReceived)} received in this chat, ${fmt(meta.messagesCompacted)} compacted so far`,
        `Context: ${fmt(used)} / ${fmt(limit)} tokens (${pct}%) — compaction at ${Math.round(THRESHOLD * 100)}%, counted with the whole memory budget (${reservedPct}% now)`,
        `Tokens by role: system ${fmt(byRole.system!)} · user ${fmt(byRole.user!)} · assistant ${fmt(byRole.assistant!)} · tool ${fmt(byRole.tool!)} · tool definitions ${fmt(toolDefs)}`,
        `Limit: min(model input ${fmt(model.maxInputTokens)}${model.matched ? '' : ' — model not in the catalogue, default'}, compaction.maxContextTokens ${fmt(runtime.get().compaction.maxContextTokens)})`,
        `Tokenizer: ${tokens.mode === 'exact' ? `exact (${tokens.encoding})` : 'estimate (chars / 3.5; no tokenizer known for this model)'}`,
        meta.lastCompaction
          ? `Last compaction: ${meta.lastCompaction.at.replace('T', ' ').slice(0, 16)} UTC, ${meta.lastCompaction.kind} (removed ${meta.lastCompaction.removed}, kept ${meta.lastCompaction.kept})`
          : 'Last compaction: never',
        `Model: ${name}${chosen ? ` (chosen with /model; default ${llm.modelFor('default')})` : ''} (summaries: ${llm.modelFor('balanced')}) · ${visionLabel(model.vision)}${fallbacks.length > 0 ? ` · fallback: ${fallbacks.join(', ')}` : ''}`,
        ...[lastAnswerText(last)].filter((l): l is string => l !== undefined),
        tokensTodayLine(services, session.id),
        `Uptime: ${formatDuration(Date.now() - stats.startedAt)}`,
      ];
      if (last?.memory && last.memory.tokens > 0) {
        const m = last.memory;
        lines.push(`Memory block: ${fmt(m.tokens)} tokens (budget ${fmt(m.budget)})`);
        if (m.drops.length > 0) lines.push(`Memory trimmed to fit: ${m.drops.map((d) => `${d.what} (${d.approximate ? 'about ' : ''}${d.tokens} tokens)`).join('; ')}`);
      } else if (last) {
        lines.push(`Memory block: empty${last.memory ? ` (budget ${fmt(last.memory.budget)})` : ''}`);
      }
      const refused = await services.memory.forChat(inbound.channel, inbound.chatId).versions.refusals();
      lines.push(
        `Memory rewrites refused: ${refused.count}${refused.last ? ` (last ${refused.last.at.replace('T', ' ').slice(0, 16)} UTC, ${refused.last.source}: would have dropped ${refused.last.dropped} of ${refused.last.prior} entries)` : ''}`,
      );
      const aside = setAsideCopies(services.config.workspaceDir);
      if (aside.length > 0) lines.push(`Damaged databases set aside (an empty one was started in their place): ${aside.join(', ')} — delete a copy once you no longer need it`);
      if (services.mcp) lines.push(...services.mcp.statusLines());
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
