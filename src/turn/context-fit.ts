/**
 * "Fit this request under the model's limit" — the one service that counts a session against
 * the context limit and compacts it when asked. Two systems use it, each for its own purpose:
 *   - AutoCompaction (18), before the prompt is built, compacts early (see auto-compact.ts);
 *   - ToolLoop (30), before every LLM call: the exact request must fit; if a round of tool
 *     results pushed it over, compact now (the guard that makes "never over the limit" hold),
 *     and once more, harder, when the provider still says "context length exceeded".
 * Neither calls the other: both call this. Limit = min(model maxInputTokens, compaction.maxContextTokens),
 * the model being the one the session answers with (its /model choice, else LLM_MODEL), counted
 * with that model's tokenizer. A fallback model with a smaller limit gets the request fitted to it
 * before it is asked (`fit` with `to`, from the tool loop).
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Session, SessionMessage } from '../sessions/model.js';
import type { SessionWriter } from '../sessions/writer.js';
import { promptTokens, type TokenCounter } from '../llm/tokens.js';
import { toApiMessage } from '../llm/messages.js';
import type { MemoryService } from '../memory/service.js';
import type { CompactionService, CompactResult, CompactRequest } from '../memory/compaction.js';
import { LlmError } from '../llm/errors.js';

/** Truncation (no summary) aims this far under the limit so the next turns have room. */
const TRUNCATION_TARGET = 0.6;

/**
 * The memory budget is reserved only while tool definitions + instructions + the budget stay
 * within this share of the limit, so the conversation keeps at least 30 % (up to the 80 %
 * threshold). A small context with a big memory share (2,000 tokens, ~680 of them tool
 * definitions) would otherwise compact on every turn; there the memory counts as last built.
 */
const RESERVE_SHARE = 0.5;

/** The model a request is measured for: its tokenizer and context limit. */
export interface FitModel {
  tokens: TokenCounter;
  limit: number;
}

export interface ContextFitDeps {
  compaction: CompactionService;
  memory: MemoryService;
  /** The model `session` answers with, as it counts. */
  model: (session: Session) => FitModel;
  toolDefinitions: () => ChatCompletionTool[];
  /** Tokens of the system prompt last built for this session (measured after its last turn), if any. */
  lastSystemPromptTokens: (sessionId: string) => number | undefined;
  /**
   * Instructions + the memory budget (0 with memory off): the most the system prompt and
   * `# Relevant Memory` hold together, since the two memory sections share that budget (a
   * MEMORY.md bigger than the budget aside). Used before the first prompt, and by system 18.
   */
  systemPromptBound: (model: FitModel) => number;
}

/** What fitting one request needs to know: the session, where the current exchange starts, the prompts it carries. */
export interface FitContext {
  /** The turn's writes to its session (a compaction replaces its messages through it). */
  readonly writes: SessionWriter;
  /** The user's current message: it and what follows are never compacted away. */
  readonly userMessage: SessionMessage;
  readonly systemPrompt: string;
  readonly turnPrompt: string;
  /** This turn's images (Images 15): sent with the request, never stored, so a fixed cost. */
  readonly images?: ReadonlyArray<{ readonly tokens: number }> | undefined;
}

export class ContextFit {
  constructor(private readonly deps: ContextFitDeps) {}

  /** The context limit of the model `session` answers with. */
  limitOf(session: Session): number {
    return this.deps.model(session).limit;
  }

  private countSession(session: Session, systemTokens: number, model: FitModel): number {
    let n = 3 + systemTokens + model.tokens.countTools(this.deps.toolDefinitions());
    for (const m of session.messages) n += this.messageTokens(m, model.tokens);
    return n;
  }

  /** Cached by message object: toApiMessage gives one request object per stored message, and the counter keeps its count. */
  private messageTokens(m: SessionMessage, tokens: TokenCounter): number {
    return tokens.countMessages([toApiMessage(m)]) - 3;
  }

  /** The system prompt's size: the last one built for this session, or an upper bound before the first. */
  systemTokens(session: Session, model: FitModel = this.deps.model(session)): number {
    return this.deps.lastSystemPromptTokens(session.id) ?? this.deps.systemPromptBound(model);
  }

  /**
   * The system prompt and `# Relevant Memory` as system 18 counts them: instructions + the whole
   * memory budget (within RESERVE_SHARE), or what the last turn built when that was more. The
   * memory sections do not keep the size they had on the last turn: `# Relevant Memory` fills
   * what `# Memory` leaves of the budget with hits for each new message, and `# Memory` grows
   * when MEMORY.md does (consolidation writes to it) or when a truncation or `/new` brings note
   * lines back. Weighed against what the last turn happened to leave, the history grows into
   * the memory's share, and every turn until the compaction costs more.
   */
  reservedSystemTokens(session: Session): number {
    const model = this.deps.model(session);
    const room = Math.floor(model.limit * RESERVE_SHARE) - model.tokens.countTools(this.deps.toolDefinitions());
    return Math.max(this.systemTokens(session, model), Math.min(this.deps.systemPromptBound(model), room));
  }

  /**
   * How much of the limit the session's next request would use: `tokens` with the system prompt
   * as last built (for /status), `reserved` with the memory sections at their whole budget
   * (what system 18 weighs against its thresholds).
   */
  usage(session: Session): { tokens: number; reserved: number; limit: number; ratio: number } {
    const model = this.deps.model(session);
    const system = this.systemTokens(session, model);
    const tokens = this.countSession(session, system, model);
    const reserved = tokens - system + this.reservedSystemTokens(session);
    return { tokens, reserved, limit: model.limit, ratio: tokens / model.limit };
  }

  /**
   * Compacts the writer's session keeping its last `keepLast` messages. `bounded`: a truncation (no summary)
   * drops only as much as needed to reach 60 % of the limit; unbounded, every unprotected exchange.
   * `imageTokens`: the turn's image, fixed like the prompt. `to`: the model to fit (default: the session's).
   */
  compact(
    writes: SessionWriter,
    keepLast: number,
    reason: CompactRequest['reason'],
    opts: { systemTokens?: number; imageTokens?: number; bounded: boolean; to?: FitModel },
  ): Promise<CompactResult> {
    const session = writes.session;
    const model = opts.to ?? this.deps.model(session);
    const systemTokens = opts.systemTokens ?? this.systemTokens(session, model);
    const req: CompactRequest = {
      keepLast,
      reason,
      scope: this.deps.memory.scopeKey(session.channelType, session.chatId),
      targetTokens: opts.bounded ? Math.floor(model.limit * TRUNCATION_TARGET) : Infinity,
      fixedTokens: 3 + systemTokens + (opts.imageTokens ?? 0) + model.tokens.countTools(this.deps.toolDefinitions()),
      countMessage: (m) => this.messageTokens(m, model.tokens),
    };
    return this.deps.compaction.compact(writes, this.deps.memory.forChat(session.channelType, session.chatId), req);
  }

  /**
   * Before an LLM call: when the exact request would exceed the limit, compact the session
   * (keeping only the current exchange) and return what was done, so the caller rebuilds its
   * messages; null when it fits. Throws a context-length error when even that cannot make it fit.
   * `to`: another model than the session's (a fallback about to be asked).
   */
  async fit(ctx: FitContext, messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[], to?: FitModel): Promise<CompactResult | null> {
    const model = to ?? this.deps.model(ctx.writes.session);
    const used = model.tokens.countMessages(messages) + model.tokens.countTools(tools);
    if (used <= model.limit) return null;
    return this.shrink(ctx, 'overflow', model);
  }

  /** Compacts hard, keeping only what follows the user's current message. */
  async shrink(ctx: FitContext, reason: CompactRequest['reason'] = 'overflow', to?: FitModel): Promise<CompactResult> {
    const session = ctx.writes.session;
    const model = to ?? this.deps.model(session);
    const idx = session.messages.lastIndexOf(ctx.userMessage);
    const keepLast = Math.max(1, idx >= 0 ? session.messages.length - idx : 2);
    const systemTokens = promptTokens(model.tokens, ctx.systemPrompt, ctx.turnPrompt) || this.systemTokens(session, model);
    const imageTokens = (ctx.images ?? []).reduce((sum, i) => sum + i.tokens, 0);
    const result = await this.compact(ctx.writes, keepLast, reason, { systemTokens, imageTokens, bounded: true, to: model });
    const after = this.countSession(session, systemTokens + imageTokens, model);
    if (after > model.limit) {
      throw new LlmError('llm.context_length_exceeded', 'rejected', `the current exchange alone needs ~${after} tokens, over the limit of ${model.limit}`);
    }
    return result;
  }
}
