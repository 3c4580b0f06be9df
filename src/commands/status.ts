/**
 * /status: how the chat stands, in three views.
 * - A manager's (commands/router.ts: owners, group admins where allowed, anyone in their own
 *   private chat) plain `/status`: a few lines a person reads — the model, how full the
 *   conversation is, memory, reminders, today's tokens, and whether all is well (each thing that
 *   is not, in words).
 * - `/status full` (managers only): the operator's view behind it — session, context, tokens by
 *   role, tokenizer, memory block, rewrites refused, MCP servers (their lines as servers.ts
 *   writes them), per-system timings.
 * - A group member's `/status`: the short one — model, memory on or off, the conversation's size
 *   and today's tokens against the budget.
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
import { memoryEntries } from '../memory/guard.js';
import { describeReminder } from '../reminders/service.js';

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

type StatusSession = Parameters<Command['run']>[0]['session'];
type StatusInbound = Parameters<Command['run']>[0]['inbound'];

const plural = (n: number, one: string, many = `${one}s`) => `${n === 0 ? 'no' : fmt(n)} ${n === 1 ? one : many}`;

/** What is not well, in words a person reads; empty when all is. Each points to where to look. */
function problems(services: StatusServices, session: StatusSession): string[] {
  const out: string[] = [];
  const last = services.stats.lastTurn(session.id);
  const by = last?.answeredBy;
  if (by?.fallbackFrom) out.push(`the last answer came from ${by.model}, because ${by.fallbackFrom} failed`);
  if (last?.timings.some((t) => t.outcome === 'failed')) out.push('a step failed while the last message was handled (/status full shows which)');
  const use = budgetUse(services, session.id);
  if (use && use.used >= services.budget.limit!) out.push("today's token budget is used up: messages wait for tomorrow");
  if (services.runtime.get().memory.enabled && !services.index.enabled) out.push('memory search is off: its database could not be opened (the log says why)');
  if (setAsideCopies(services.config.workspaceDir).length > 0) out.push('a damaged database was replaced by an empty one (/status full names the copy kept)');
  return out;
}

/** Long-term memory in a few words: how many entries MEMORY.md holds, how many facts were saved. */
async function memoryText(services: StatusServices, inbound: StatusInbound): Promise<string> {
  if (!services.runtime.get().memory.enabled) return 'off — nothing is remembered beyond this conversation';
  let entries: string;
  try {
    const n = memoryEntries(await services.memory.forChat(inbound.channel, inbound.chatId).readMemory()).length;
    entries = n === 0 ? 'long-term memory is empty' : `long-term memory holds ${plural(n, 'entry', 'entries')}`;
  } catch {
    entries = 'long-term memory could not be read (/memory says why)';
  }
  const facts = services.index.enabled ? (services.index.stats(services.memory.scopeKey(inbound.channel, inbound.chatId)).byKind.fact ?? 0) : undefined;
  return `on — ${entries}${facts === undefined ? '' : `, and ${plural(facts, 'saved fact')}`}`;
}

/** A manager's plain /status: a few lines in words, the figures behind them in /status full. */
async function plainStatus(services: StatusServices, session: StatusSession, inbound: StatusInbound): Promise<string> {
  const m = chatModel(services, session);
  const chosen = session.metadata.model !== undefined && m.name !== services.llm.modelFor('default');
  // The context as last built against the model's room; compaction counts the memory budget whole, so it comes earlier.
  const { tokens, limit } = services.compactor.usage(session);
  const share = (tokens / limit) * 100;
  const pending = services.reminders.list(inbound.channel, inbound.chatId);
  const use = budgetUse(services, session.id);
  const today = services.usage.day(session.id).all.total;
  const wrong = problems(services, session);
  return [
    '📊 Status',
    `Model: ${m.name}, ${visionLabel(m.info.vision)}${chosen ? ' (chosen with /model)' : ''}`,
    `Conversation: ${plural(session.messages.length, 'message')}, ${share < 1 ? 'under 1%' : `${Math.min(100, Math.round(share))}%`} of what the model can read at once — the older part is summarised into memory well before it is full`,
    `Memory: ${await memoryText(services, inbound)}`,
    `Reminders: ${pending.length === 0 ? 'none' : `${fmt(pending.length)} pending, the next: ${describeReminder(pending[0]!)}`}`,
    `Today: ${fmt(today)} tokens used${use ? `, ${use.pct} of ${isTopic(session.id) ? "the group's" : 'the'} daily budget (${fmt(services.budget.limit!)})` : ''}`,
    wrong.length === 0 ? 'All is well.' : `⚠️ Needs a look: ${wrong.join('; ')}.`,
    'The details: /status full',
  ].join('\n');
}

export function createStatusCommand(): Command {
  return {
    name: 'status',
    description: 'How this chat stands: model, conversation, memory, reminders; /status full for the details',
    // The details are the operator's (settings, timings, servers); a member keeps the short view.
    access: (args) => (/^full\b/i.test(args) ? 'managers' : 'everyone'),
    async run({ session, services, inbound, role, args }) {
      if (!isManager(role)) return shortStatus(services, session);
      const wanted = args.trim().toLowerCase();
      if (wanted === '') return plainStatus(services, session, inbound);
      if (wanted !== 'full') return `"/status ${args.trim()}" — send /status, or /status full for the details.`;
      // The operator's view: every figure behind the plain one.
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
        if (m.drops.length > 0)
          lines.push(`Memory trimmed to fit: ${m.drops.map((d) => `${d.what} (${d.approximate ? 'about ' : ''}${d.tokens} tokens)`).join('; ')}`);
      } else if (last) {
        lines.push(`Memory block: empty${last.memory ? ` (budget ${fmt(last.memory.budget)})` : ''}`);
      }
      const refused = await services.memory.forChat(inbound.channel, inbound.chatId).versions.refusals();
      lines.push(
        `Memory rewrites refused: ${refused.count}${refused.last ? ` (last ${refused.last.at.replace('T', ' ').slice(0, 16)} UTC, ${refused.last.source}: would have dropped ${refused.last.dropped} of ${refused.last.prior} entries)` : ''}`,
      );
      const aside = setAsideCopies(services.config.workspaceDir);
      if (aside.length > 0)
        lines.push(`Damaged databases set aside (an empty one was started in their place): ${aside.join(', ')} — delete a copy once you no longer need it`);
      if (services.mcp) lines.push(...services.mcp.statusLines());
      if (last) {
        const parts = last.timings.map(
          (t) => `${t.system} ${t.outcome === 'skipped' ? 'skipped' : `${t.ms.toFixed(1)}ms`}${t.outcome === 'failed' ? ' (failed)' : ''}`,
        );
        lines.push(`Last turn: ${parts.join(' · ')}`);
      } else {
        lines.push('Last turn: none yet');
      }
      return lines.join('\n');
    },
  };
}
