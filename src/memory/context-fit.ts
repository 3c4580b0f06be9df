/**
 * "Fit this request under the model's limit" — the one service that counts a session against
 * the context limit and compacts it when asked. Two systems use it, each for its own purpose:
 *   - AutoCompaction (18), before the prompt is built, compacts early (see auto-compact.ts);
 *   - ToolLoop (30), before every LLM call: the exact request must fit; if a round of tool
 *     results pushed it over, compact now (the guard that makes "never over the limit" hold),
 *     and once more, harder, when the provider still says "context length exceeded".
 * Neither calls the other: both call this. Limit = min(model maxInputTokens, compaction.maxContextTokens).
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Session, SessionMessage } from '../sessions/model.js';
import type { SessionWriter } from '../sessions/writer.js';
import type { TokenCounter } from '../llm/tokens.js';
import { toApiMessage } from '../llm/messages.js';
import type { MemoryService } from './service.js';
import type { CompactionService, CompactResult, CompactRequest } from './compaction.js';
import { LlmError } from '../llm/errors.js';

/** Truncation (no summary) aims this far under the limit so the next turns have room. */
const TRUNCATION_TARGET = 0.6;

export interface ContextFitDeps {
  compaction: CompactionService;
  memory: MemoryService;
  tokens: TokenCounter;
  contextLimit: () => number;
  toolDefinitions: () => ChatCompletionTool[];
  /** Tokens of the system prompt last built for this session (measured after its last turn), if any. */
  lastSystemPromptTokens: (sessionId: string) => number | undefined;
  /** Upper bound when no prompt was built yet: instructions + the memory budget. */
  systemPromptBound: () => number;
}

/** What fitting one request needs to know: the session, where the current exchange starts, the prompts it carries. */
export interface FitContext {
  /** The turn's writes to its session (a compaction replaces its messages through it). */
  readonly writes: SessionWriter;
  /** The user's current message: it and what follows are never compacted away. */
  readonly userMessage: SessionMessage;
  readonly systemPrompt: string;
  readonly turnPrompt: string;
  /** This turn's image (Images 15): sent with the request, never stored, so a fixed cost. */
  readonly image?: { readonly tokens: number } | undefined;
}

export class ContextFit {
  constructor(private readonly deps: ContextFitDeps) {}

  get limit(): number {
    return this.deps.contextLimit();
  }

  private countSession(session: Session, systemTokens: number): number {
    let n = 3 + systemTokens + this.deps.tokens.countTools(this.deps.toolDefinitions());
    for (const m of session.messages) n += this.messageTokens(m);
    return n;
  }

  /** Cached by message object: toApiMessage gives one request object per stored message, and the counter keeps its count. */
  private messageTokens(m: SessionMessage): number {
    return this.deps.tokens.countMessages([toApiMessage(m)]) - 3;
  }

  /** The system prompt's size: the last one built for this session, or an upper bound before the first. */
  systemTokens(session: Session): number {
    return this.deps.lastSystemPromptTokens(session.id) ?? this.deps.systemPromptBound();
  }

  /** How much of the limit the session's next request would use (for /status and system 18). */
  usage(session: Session): { tokens: number; limit: number; ratio: number } {
    const limit = this.deps.contextLimit();
    const tokens = this.countSession(session, this.systemTokens(session));
    return { tokens, limit, ratio: tokens / limit };
  }

  /**
   * Compacts the writer's session keeping its last `keepLast` messages. `bounded`: a truncation (no summary)
   * drops only as much as needed to reach 60 % of the limit; unbounded, every unprotected exchange.
   * `imageTokens`: the turn's image, fixed like the prompt.
   */
  compact(writes: SessionWriter, keepLast: number, reason: CompactRequest['reason'], opts: { systemTokens?: number; imageTokens?: number; bounded: boolean }): Promise<CompactResult> {
    const session = writes.session;
    const systemTokens = opts.systemTokens ?? this.systemTokens(session);
    const req: CompactRequest = {
      keepLast,
      reason,
      scope: this.deps.memory.scopeKey(session.channelType, session.chatId),
      targetTokens: opts.bounded ? Math.floor(this.deps.contextLimit() * TRUNCATION_TARGET) : Infinity,
      fixedTokens: 3 + systemTokens + (opts.imageTokens ?? 0) + this.deps.tokens.countTools(this.deps.toolDefinitions()),
      countMessage: (m) => this.messageTokens(m),
    };
    return this.deps.compaction.compact(writes, this.deps.memory.forChat(session.channelType, session.chatId), req);
  }

  /**
   * Before an LLM call: when the exact request would exceed the limit, compact the session
   * (keeping only the current exchange) and return what was done, so the caller rebuilds its
   * messages; null when it fits. Throws a context-length error when even that cannot make it fit.
   */
  async fit(ctx: FitContext, messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[]): Promise<CompactResult | null> {
    const used = this.deps.tokens.countMessages(messages) + this.deps.tokens.countTools(tools);
    if (used <= this.deps.contextLimit()) return null;
    return this.shrink(ctx, 'overflow');
  }

  /** Compacts hard, keeping only what follows the user's current message. */
  async shrink(ctx: FitContext, reason: CompactRequest['reason'] = 'overflow'): Promise<CompactResult> {
    const limit = this.deps.contextLimit();
    const session = ctx.writes.session;
    const idx = session.messages.lastIndexOf(ctx.userMessage);
    const keepLast = Math.max(1, idx >= 0 ? session.messages.length - idx : 2);
    const { tokens } = this.deps;
    const systemTokens = tokens.countText(ctx.systemPrompt) + (ctx.turnPrompt ? tokens.countText(ctx.turnPrompt) + 4 : 0) || this.systemTokens(session);
    const imageTokens = ctx.image?.tokens ?? 0;
    const result = await this.compact(ctx.writes, keepLast, reason, { systemTokens, imageTokens, bounded: true });
    const after = this.countSession(session, systemTokens + imageTokens);
    if (after > limit) {
      throw new LlmError('llm.context_length_exceeded', 'rejected', `the current exchange alone needs ~${after} tokens, over the limit of ${limit}`);
    }
    return result;
  }
}
