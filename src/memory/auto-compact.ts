/**
 * When to compact, and how hard. Three callers:
 *   - AutoCompaction (18), before the prompt is built: over 80 % of the limit → compact keeping
 *     `keepLastMessages`; over 90 % → keep half as many.
 *   - the tool loop, before every LLM call: the exact request must fit the limit; if a round of
 *     tool results pushed it over, compact now (the guard that makes "never over the limit" hold).
 *   - the tool loop, when the provider still says "context length exceeded": compact harder, once.
 * Limit = min(model maxInputTokens, compaction.maxContextTokens).
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Session } from '../sessions/model.js';
import type { Turn } from '../pipeline/turn.js';
import type { TokenCounter } from '../llm/tokens.js';
import { toApiMessage } from '../llm/messages.js';
import type { RuntimeConfigStore } from '../config/runtime.js';
import type { MemoryService } from './service.js';
import type { CompactionService, CompactResult, CompactRequest } from './compaction.js';
import { LlmError } from '../llm/errors.js';

export const THRESHOLD = 0.8;
export const HARD_THRESHOLD = 0.9;
/** Truncation (no summary) aims this far under the limit so the next turns have room. */
const TRUNCATION_TARGET = 0.6;

export interface AutoCompactorDeps {
  compaction: CompactionService;
  memory: MemoryService;
  runtime: RuntimeConfigStore;
  tokens: TokenCounter;
  contextLimit: () => number;
  toolDefinitions: () => ChatCompletionTool[];
  /** Tokens of the system prompt last built for this session, if any. */
  lastSystemPromptTokens: (sessionId: string) => number | undefined;
  /** Upper bound when no prompt was built yet: instructions + the memory budget. */
  systemPromptBound: () => number;
}

export function compactionNotice(r: CompactResult): string {
  if (r.kind === 'summary') {
    const mem = r.consolidation?.memoryUpdated ? 'memory updated' : r.consolidation?.kind === 'raw-fallback' ? 'saved to history' : 'history updated';
    return `Compacted the conversation: ${r.removed} messages summarized, ${mem}`;
  }
  return `Compacted the conversation: ${r.removed} older messages removed (a summary was not available; they are kept in the history log)`;
}

export class AutoCompactor {
  constructor(private readonly deps: AutoCompactorDeps) {}

  private countSession(session: Session, systemTokens: number): number {
    const { tokens } = this.deps;
    let n = 3 + systemTokens + tokens.countTools(this.deps.toolDefinitions());
    for (const m of session.messages) n += this.messageTokens(m);
    return n;
  }

  /** Cached by message object: toApiMessage gives one request object per stored message, and the counter keeps its count. */
  private messageTokens(m: Session['messages'][number]): number {
    return this.deps.tokens.countMessages([toApiMessage(m)]) - 3;
  }

  private systemTokens(session: Session): number {
    return this.deps.lastSystemPromptTokens(session.id) ?? this.deps.systemPromptBound();
  }

  private request(session: Session, keepLast: number, reason: CompactRequest['reason'], systemTokens: number, target: number): CompactRequest {
    return {
      keepLast,
      reason,
      scope: this.deps.memory.scopeKey(session.channelType, session.chatId),
      targetTokens: target,
      fixedTokens: 3 + systemTokens + this.deps.tokens.countTools(this.deps.toolDefinitions()),
      countMessage: (m) => this.messageTokens(m),
    };
  }

  private files(turnOrSession: { channelType: string; chatId: string }) {
    return this.deps.memory.forChat(turnOrSession.channelType, turnOrSession.chatId);
  }

  /** Usage of the context for /status and system 18. */
  usage(session: Session): { tokens: number; limit: number; ratio: number } {
    const limit = this.deps.contextLimit();
    const tokens = this.countSession(session, this.systemTokens(session));
    return { tokens, limit, ratio: tokens / limit };
  }

  /** System 18: compact when the coming request would be over 80 % (90 %: harder). */
  async beforeTurn(turn: Turn): Promise<CompactResult | null> {
    const rc = this.deps.runtime.get().compaction;
    const { tokens, limit, ratio } = this.usage(turn.session);
    if (ratio <= THRESHOLD) return null;
    const hard = ratio > HARD_THRESHOLD;
    const keepLast = hard ? Math.max(2, Math.floor(rc.keepLastMessages / 2)) : rc.keepLastMessages;
    turn.log.info({ tokens, limit, threshold: Math.floor(limit * THRESHOLD), messages: turn.session.messages.length }, `[AutoCompact] Context too large: ~${tokens} tokens (threshold ${Math.floor(limit * THRESHOLD)}), ${turn.session.messages.length} messages. Compacting...`);
    const result = await this.deps.compaction.compact(
      turn.session,
      this.files(turn.session),
      this.request(turn.session, keepLast, hard ? 'hard' : 'auto', this.systemTokens(turn.session), Math.floor(limit * TRUNCATION_TARGET)),
    );
    return result.kind === 'none' ? null : result;
  }

  /**
   * Tool-loop guard: when the exact request would exceed the limit, compact the session (keeping
   * only the current exchange) and report true so the caller rebuilds its messages. Throws a
   * context-length error when even that cannot make it fit.
   */
  async fit(turn: Turn, messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[]): Promise<boolean> {
    const limit = this.deps.contextLimit();
    const used = this.deps.tokens.countMessages(messages) + this.deps.tokens.countTools(tools);
    if (used <= limit) return false;
    await this.shrink(turn, 'overflow');
    return true;
  }

  /** Compacts hard, keeping only what follows the user's current message. */
  async shrink(turn: Turn, reason: CompactRequest['reason'] = 'overflow'): Promise<CompactResult> {
    const limit = this.deps.contextLimit();
    const session = turn.session;
    const idx = session.messages.lastIndexOf(turn.userMessage);
    const keepLast = Math.max(1, idx >= 0 ? session.messages.length - idx : 2);
    const systemTokens = this.deps.tokens.countText(turn.systemPrompt) + (turn.turnPrompt ? this.deps.tokens.countText(turn.turnPrompt) + 4 : 0) || this.systemTokens(session);
    const result = await this.deps.compaction.compact(session, this.files(session), this.request(session, keepLast, reason, systemTokens, Math.floor(limit * TRUNCATION_TARGET)));
    if (result.kind !== 'none') turn.notices.push(compactionNotice(result));
    const after = this.countSession(session, systemTokens);
    if (after > limit) {
      throw new LlmError('llm.context_length_exceeded', 'rejected', `the current exchange alone needs ~${after} tokens, over the limit of ${limit}`);
    }
    return result;
  }

  /** `/compact N` and the like: compact now keeping the last `keepLast` messages. */
  async compactNow(session: Session, keepLast: number): Promise<CompactResult> {
    return this.deps.compaction.compact(session, this.files(session), this.request(session, keepLast, 'manual', this.systemTokens(session), Infinity));
  }
}
