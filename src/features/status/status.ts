/**
 * /status: how the chat stands, in three views.
 * - A manager's (turn/command.ts: owners, group admins where allowed, anyone in their own
 *   private chat) plain `/status`: a few lines a person reads — the model, how full the
 *   conversation is, memory, reminders, today's tokens, and whether all is well (each thing that
 *   is not, in words).
 * - `/status full` (managers only): the operator's view behind it — session, context, tokens by
 *   role, tokenizer, memory block, rewrites refused, MCP servers (their lines as servers.ts
 *   writes them), per-system timings.
 * - A group member's `/status`: the short one — model, memory on or off, the conversation's size
 *   and today's tokens against the budget.
 */
import { isManager, type Command } from '../../turn/command.js';
import { toApiMessage } from '../../llm/messages.js';
import { THRESHOLD, type AutoCompactor } from '../../turn/auto-compact.js';
import { setAsideCopies } from '../../storage/sqlite.js';
import type { Database } from '../../storage/pg/database.js';
import { healthLine } from '../../storage/pg/health.js';
import { isTopic } from '../../core/group.js';
import { visionLabel } from '../../llm/vision.js';
import type { TurnRecord, TurnStats } from '../../turn/stats.js';
import { memoryEntries } from '../../memory/guard.js';
import type { Session } from '../../sessions/model.js';
import type { ActiveModel } from '../../llm/chat-models.js';
import type { LlmClient } from '../../llm/client.js';
import type { TokenUsage } from '../../llm/accounting.js';
import type { RuntimeConfigStore } from '../../config/runtime.js';
import type { MemoryService } from '../../memory/service.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { ToolRegistry } from '../../tools/registry.js';

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return [d ? `${d}d` : '', h ? `${h}h` : '', m ? `${m}m` : '', `${sec}s`].filter(Boolean).join(' ');
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** A day's tokens as usage.db sums them. */
type DayTokens = TokenUsage & { total: number };

/** What /status reads, each from where it is kept. */
export interface StatusDeps {
  /** The model a chat answers with (its /model choice, else LLM_MODEL), with its context limit. */
  modelOf: (session: Session) => ActiveModel;
  llm: Pick<LlmClient, 'modelFor' | 'chainFor'>;
  stats: Pick<TurnStats, 'lastTurn' | 'startedAt'>;
  runtime: Pick<RuntimeConfigStore, 'get'>;
  compactor: Pick<AutoCompactor, 'usage'>;
  memory: MemoryService;
  index: Pick<MemoryIndex, 'enabled' | 'stats'>;
  tools: Pick<ToolRegistry, 'definitions'>;
  /** The chat's pending reminders, soonest first, one line each. */
  reminders: (channel: string, chatId: string) => Promise<string[]>;
  /** Tokens per chat per day (usage.db). */
  usage: { day(chat: string): Promise<{ all: DayTokens; answers: DayTokens; background: DayTokens }>; groupDay(chat: string): Promise<DayTokens> };
  /** DAILY_TOKEN_BUDGET. */
  budget: { readonly enabled: boolean; readonly limit: number | undefined; usedToday(chat: string): Promise<number> };
  /** One line per MCP server (none configured: none). */
  mcpLines: () => string[];
  /** Where damaged databases set aside are looked for. */
  workspaceDir: string;
  /** With DATABASE_URL: the database the state is kept in (where it is and whether it answers). */
  database?: Pick<Database, 'where' | 'health'> | undefined;
  /** Several processes on one database: the processes alive and who holds which lease (cluster/status.ts). Unset: one process. */
  clusterLines?: (() => Promise<string[]>) | undefined;
}

/** "Database: PostgreSQL at host:5432/membot: up since …" (never the password); none without DATABASE_URL. */
function databaseLines(deps: StatusDeps): string[] {
  return deps.database ? [`Database: ${healthLine(deps.database.where, deps.database.health())}`] : [];
}

/**
 * With DATABASE_URL, once a call found the database down: the reads that need it are not made
 * (each would wait for it up to its wait), and their lines say so — the Database line says why.
 */
function databaseDown(deps: StatusDeps): boolean {
  return deps.database?.health().state === 'down';
}
const NOT_KNOWN = 'not known while the database does not answer';

/** The budget's share used today; the budget counts a forum topic's whole group (features/usage/budget.ts). */
async function budgetUse(deps: StatusDeps, chat: string): Promise<{ used: number; pct: string } | null> {
  const { budget } = deps;
  if (!budget.enabled || databaseDown(deps)) return null;
  const used = await budget.usedToday(chat);
  return { used, pct: `${Math.min(100, (used / budget.limit!) * 100).toFixed(1)}%` };
}

/** Today's tokens of the chat (usage.db): answers and background apart, and the cached share. */
async function tokensTodayLine(deps: StatusDeps, chat: string): Promise<string> {
  if (databaseDown(deps)) return `Tokens today: ${NOT_KNOWN}`;
  const { all, answers, background } = await deps.usage.day(chat);
  const cached = all.promptTokens > 0 ? ` · ${((all.cachedTokens / all.promptTokens) * 100).toFixed(1)}% of prompt tokens cached` : '';
  const use = await budgetUse(deps, chat);
  const limit = !use
    ? ''
    : isTopic(chat)
      ? ` · daily budget ${fmt(deps.budget.limit!)} for the whole group (${fmt(use.used)} used by its topics together, ${use.pct})`
      : ` · daily budget ${fmt(deps.budget.limit!)} (${use.pct} used)`;
  return `Tokens today: ${fmt(all.total)} (answers ${fmt(answers.total)}, background ${fmt(background.total)}; prompt ${fmt(all.promptTokens)}, completion ${fmt(all.completionTokens)})${cached}${limit}`;
}

/** "gpt-4.1 · reads images", the chat's model as it answers now. */
function modelText(deps: StatusDeps, session: Session): string {
  const m = deps.modelOf(session);
  return `${m.name} · ${visionLabel(m.info.vision)}`;
}

/** Who wrote the last answer: "Last answer by llama3 (fallback from gpt-4.1)". */
function lastAnswerText(last: TurnRecord | undefined): string | undefined {
  const by = last?.answeredBy;
  if (!by) return undefined;
  return `Last answer by ${by.model}${by.fallbackFrom ? ` (fallback from ${by.fallbackFrom}, which failed)` : ''}`;
}

/** A group member's /status: what the chat runs on and how much of today's budget is left, no operator internals. */
async function shortStatus(deps: StatusDeps, session: Session): Promise<string> {
  const chat = session.id;
  if (databaseDown(deps)) return ['📊 Status', `Model: ${modelText(deps, session)}`, `Tokens today: ${NOT_KNOWN}`].join('\n');
  const mine = (await deps.usage.day(chat)).all.total;
  const use = await budgetUse(deps, chat);
  const tokens = isTopic(chat) ? `${fmt(mine)} in this topic, ${fmt((await deps.usage.groupDay(chat)).total)} in the group` : fmt(mine);
  const budget = !use ? ' (no daily budget)' : `${isTopic(chat) ? ', of its' : ' of the'} daily budget of ${fmt(deps.budget.limit!)} (${use.pct})`;
  return [
    '📊 Status',
    `Model: ${modelText(deps, session)}`,
    ...[lastAnswerText(deps.stats.lastTurn(chat))].filter((l): l is string => l !== undefined),
    `Memory: ${deps.runtime.get().memory.enabled ? 'on' : 'off'}`,
    `Messages: ${session.messages.length} in this conversation, ${fmt(session.metadata.messagesReceived)} received in this chat`,
    `Tokens today: ${tokens}${budget}`,
    "The full status is for the bot's owner.",
  ].join('\n');
}

type StatusSession = Session;
type StatusInbound = Parameters<Command['run']>[0]['inbound'];

const plural = (n: number, one: string, many = `${one}s`) => `${n === 0 ? 'no' : fmt(n)} ${n === 1 ? one : many}`;

/** What is not well, in words a person reads; empty when all is. Each points to where to look. */
async function problems(deps: StatusDeps, session: StatusSession): Promise<string[]> {
  const out: string[] = [];
  const last = deps.stats.lastTurn(session.id);
  const by = last?.answeredBy;
  if (by?.fallbackFrom) out.push(`the last answer came from ${by.model}, because ${by.fallbackFrom} failed`);
  if (last?.timings.some((t) => t.outcome === 'failed')) out.push('a step failed while the last message was handled (/status full shows which)');
  const use = await budgetUse(deps, session.id);
  if (use && use.used >= deps.budget.limit!) out.push("today's token budget is used up: messages wait for tomorrow");
  if (deps.runtime.get().memory.enabled && !deps.index.enabled) out.push('memory search is off: its database could not be opened (the log says why)');
  if (setAsideCopies(deps.workspaceDir).length > 0) out.push('a damaged database was replaced by an empty one (/status full names the copy kept)');
  if (deps.database?.health().state === 'down') out.push('the database does not answer: what needs it waits and is retried (the log says why)');
  return out;
}

/** Long-term memory in a few words: how many entries MEMORY.md holds, how many facts were saved. */
async function memoryText(deps: StatusDeps, inbound: StatusInbound): Promise<string> {
  if (!deps.runtime.get().memory.enabled) return 'off — nothing is remembered beyond this conversation';
  let entries: string;
  if (databaseDown(deps)) entries = `long-term memory ${NOT_KNOWN}`;
  else
    try {
      const n = memoryEntries(await deps.memory.forChat(inbound.channel, inbound.chatId).readMemory()).length;
      entries = n === 0 ? 'long-term memory is empty' : `long-term memory holds ${plural(n, 'entry', 'entries')}`;
    } catch {
      entries = 'long-term memory could not be read (/memory says why)';
    }
  const facts = deps.index.enabled ? (deps.index.stats(deps.memory.scopeKey(inbound.channel, inbound.chatId)).byKind.fact ?? 0) : undefined;
  return `on — ${entries}${facts === undefined ? '' : `, and ${plural(facts, 'saved fact')}`}`;
}

/** A manager's plain /status: a few lines in words, the figures behind them in /status full. */
async function plainStatus(deps: StatusDeps, session: StatusSession, inbound: StatusInbound): Promise<string> {
  const m = deps.modelOf(session);
  const chosen = session.metadata.model !== undefined && m.name !== deps.llm.modelFor('default');
  // The context as last built against the model's room; compaction counts the memory budget whole, so it comes earlier.
  const { tokens, limit } = deps.compactor.usage(session);
  const share = (tokens / limit) * 100;
  const down = databaseDown(deps);
  const pending = down ? undefined : await deps.reminders(inbound.channel, inbound.chatId);
  const use = await budgetUse(deps, session.id);
  const today = down ? undefined : (await deps.usage.day(session.id)).all.total;
  const wrong = await problems(deps, session);
  return [
    '📊 Status',
    `Model: ${m.name}, ${visionLabel(m.info.vision)}${chosen ? ' (chosen with /model)' : ''}`,
    `Conversation: ${plural(session.messages.length, 'message')}, ${share < 1 ? 'under 1%' : `${Math.min(100, Math.round(share))}%`} of what the model can read at once — the older part is summarised into memory well before it is full`,
    `Memory: ${await memoryText(deps, inbound)}`,
    `Reminders: ${pending === undefined ? NOT_KNOWN : pending.length === 0 ? 'none' : `${fmt(pending.length)} pending, the next: ${pending[0]!}`}`,
    today === undefined
      ? `Today: tokens used ${NOT_KNOWN}`
      : `Today: ${fmt(today)} tokens used${use ? `, ${use.pct} of ${isTopic(session.id) ? "the group's" : 'the'} daily budget (${fmt(deps.budget.limit!)})` : ''}`,
    ...databaseLines(deps),
    wrong.length === 0 ? 'All is well.' : `⚠️ Needs a look: ${wrong.join('; ')}.`,
    'The details: /status full',
  ].join('\n');
}

export function createStatusCommand(deps: StatusDeps): Command {
  return {
    name: 'status',
    description: 'How this chat stands: model, conversation, memory, reminders; /status full for the details',
    // The details are the operator's (settings, timings, servers); a member keeps the short view.
    access: (args) => (/^full\b/i.test(args) ? 'managers' : 'everyone'),
    async run({ session, inbound, role, args }) {
      if (!isManager(role)) return shortStatus(deps, session);
      const wanted = args.trim().toLowerCase();
      if (wanted === '') return plainStatus(deps, session, inbound);
      if (wanted !== 'full') return `"/status ${args.trim()}" — send /status, or /status full for the details.`;
      // The operator's view: every figure behind the plain one.
      const { llm, stats, runtime } = deps;
      const last = stats.lastTurn(session.id);
      // The chat's own model: its limit, tokenizer and images (/model), else LLM_MODEL's.
      const { tokens, info: model, name } = deps.modelOf(session);
      const chosen = session.metadata.model !== undefined && name !== llm.modelFor('default');
      const fallbacks = llm.chainFor(name).slice(1);
      const { tokens: used, reserved, limit } = deps.compactor.usage(session);
      const pct = ((used / limit) * 100).toFixed(1);
      const reservedPct = ((reserved / limit) * 100).toFixed(1);
      const byRole: Record<string, number> = { system: last?.systemPromptTokens ?? 0, user: 0, assistant: 0, tool: 0 };
      for (const m of session.messages) byRole[m.role] = (byRole[m.role] ?? 0) + tokens.countMessages([toApiMessage(m)]) - 3;
      const toolDefs = tokens.countTools(deps.tools.definitions());
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
        await tokensTodayLine(deps, session.id),
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
      const refused = databaseDown(deps) ? undefined : await deps.memory.forChat(inbound.channel, inbound.chatId).versions.refusals();
      lines.push(
        refused === undefined
          ? `Memory rewrites refused: ${NOT_KNOWN}`
          : `Memory rewrites refused: ${refused.count}${refused.last ? ` (last ${refused.last.at.replace('T', ' ').slice(0, 16)} UTC, ${refused.last.source}: would have dropped ${refused.last.dropped} of ${refused.last.prior} entries)` : ''}`,
      );
      const aside = setAsideCopies(deps.workspaceDir);
      if (aside.length > 0)
        lines.push(`Damaged databases set aside (an empty one was started in their place): ${aside.join(', ')} — delete a copy once you no longer need it`);
      lines.push(...databaseLines(deps));
      lines.push(...deps.mcpLines());
      if (deps.clusterLines) lines.push(...(await deps.clusterLines().catch(() => ['Processes: not known (the database did not answer)'])));
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
