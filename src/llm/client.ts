/**
 * LlmClient: chat completions and embeddings through the official `openai` SDK, pointed at
 * OpenAI or any compatible server by OPENAI_BASE_URL. The SDK's own retries are off: ours
 * (core/retry.ts) honour retry-after and are shared with Telegram. Each call has a hard
 * timeout of our own that covers the whole response, body included.
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Config } from '../config/env.js';
import type { Logger } from '../core/log.js';
import { withRetry } from '../core/retry.js';
import { normalizeToolCall, type ToolCall } from '../sessions/model.js';
import { LlmError, classifyLlmError, toLlmError } from './errors.js';
import { toTokenUsage, type TokenUsage, type UsageAccount } from './accounting.js';
import { readStream, refusesStreamOptions, streamingBody, type StreamSupport } from './stream.js';
import { transcribeAudio, type TranscriptionRequest, type TranscriptionResult } from './transcribe.js';

export type ModelTier = 'default' | 'balanced';

export interface ChatCallOptions {
  tier?: ModelTier;
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[] | undefined;
  toolChoice?: 'auto' | 'none' | undefined;
  temperature?: number | undefined;
  maxTokens?: number | undefined;
  /** Overrides LLM_TIMEOUT_MS for this call. */
  timeoutMs?: number | undefined;
  /** Overrides LLM_MAX_RETRIES for this call. */
  retries?: number | undefined;
  log?: Logger | undefined;
  /** Whom the tokens are billed to (usage accounting); unaccounted calls (doctor) are not recorded. */
  account?: UsageAccount | undefined;
  /** Aborts the call (and any retry) at once: the turn's deadline. */
  signal?: AbortSignal | undefined;
  /** Set: the answer is streamed and this gets its text so far as it grows (llm/stream.ts). */
  onText?: ((soFar: string) => void) | undefined;
}

/** Receives the `usage` of every accounted response. */
export type UsageSink = (account: UsageAccount, usage: TokenUsage) => void;

export interface ChatResult {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: TokenUsage | null;
  model: string;
}

/** o-series and gpt-5 take `max_completion_tokens` and only the default temperature. */
export function isReasoningModel(model: string): boolean {
  const m = model.toLowerCase().replace(/^.*\//, '');
  return /^(o\d|gpt-5)/.test(m);
}

/**
 * The model's tool calls, each well-typed (sessions/model.ts, normalizeToolCall) and with an id
 * of its own: the answer is untrusted, and whatever it holds is stored and sent back on every
 * later turn. Calls of another type than "function" are skipped; a missing type is accepted.
 */
function readToolCalls(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  const out: ToolCall[] = [];
  const ids = new Set<string>();
  for (const tc of raw as unknown[]) {
    const type = tc && typeof tc === 'object' ? (tc as { type?: unknown }).type : undefined;
    if (type !== undefined && type !== 'function') continue;
    const call = normalizeToolCall(tc);
    // Results are matched to calls by id: two calls sharing one would leave one unanswered.
    if (ids.has(call.id)) call.id = `${call.id}_${out.length}`;
    ids.add(call.id);
    out.push(call);
  }
  return out;
}

export class LlmClient {
  readonly sdk: OpenAI;
  /** Set by the app: where the usage of accounted calls goes. A failing sink never fails a call. */
  usageSink: UsageSink | undefined;
  /** Set by the app: true when a call billed to this account must not be made (daily token budget). */
  gate: ((account: UsageAccount) => boolean) | undefined;
  /** What the server turned out to accept when streaming (learned once, kept for the process). */
  private readonly streamSupport: StreamSupport = { usageOption: true };

  constructor(
    private readonly config: Pick<Config, 'openaiApiKey' | 'openaiBaseUrl' | 'model' | 'modelBalanced' | 'llmTimeoutMs' | 'llmMaxRetries'>,
    private readonly log: Logger,
  ) {
    this.sdk = new OpenAI({
      apiKey: config.openaiApiKey,
      baseURL: config.openaiBaseUrl ?? null,
      maxRetries: 0,
      timeout: config.llmTimeoutMs,
    });
  }

  modelFor(tier: ModelTier = 'default'): string {
    return tier === 'balanced' ? this.config.modelBalanced : this.config.model;
  }

  async chat(opts: ChatCallOptions): Promise<ChatResult> {
    if (opts.account && this.gate?.(opts.account)) {
      throw new LlmError('llm.budget_exhausted', 'rejected', `${opts.account.kind} for ${opts.account.chat} not made: the chat has used its daily token budget`);
    }
    const model = this.modelFor(opts.tier);
    const reasoning = isReasoningModel(model);
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = { model, messages: opts.messages };
    if (opts.tools && opts.tools.length > 0) {
      body.tools = opts.tools;
      if (opts.toolChoice) body.tool_choice = opts.toolChoice;
    }
    if (opts.temperature !== undefined && !reasoning) body.temperature = opts.temperature;
    if (opts.maxTokens !== undefined) {
      if (reasoning) body.max_completion_tokens = opts.maxTokens;
      else body.max_tokens = opts.maxTokens;
    }
    const log = opts.log ?? this.log;
    const timeoutMs = opts.timeoutMs ?? this.config.llmTimeoutMs;
    if (opts.onText) return this.chatStreamed(body, opts.onText, model, timeoutMs, opts, log);
    const res = await this.call(
      async (signal) => this.sdk.chat.completions.create(body, { signal, timeout: timeoutMs }),
      timeoutMs,
      opts.retries ?? this.config.llmMaxRetries,
      log,
      opts.signal,
    );
    const choice = res.choices?.[0];
    if (!choice || !choice.message) {
      throw new LlmError('llm.bad_response', 'rejected', 'the LLM server answered without any choice');
    }
    const usage: TokenUsage | null = res.usage
      ? toTokenUsage(res.usage)
      : null;
    if (usage && opts.account) this.report(opts.account, usage, log);
    const msg = choice.message;
    const toolCalls = readToolCalls(msg.tool_calls);
    return {
      content: typeof msg.content === 'string' ? msg.content : '',
      toolCalls,
      finishReason: choice.finish_reason ?? null,
      usage,
      model: res.model ?? model,
    };
  }

  /**
   * The same call, streamed. The whole stream is read inside one attempt, so the hard timeout
   * covers it to its last event, and a retry starts the text again from nothing.
   */
  private async chatStreamed(
    body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    onText: (soFar: string) => void,
    model: string,
    timeoutMs: number,
    opts: ChatCallOptions,
    log: Logger,
  ): Promise<ChatResult> {
    const attempt = async (signal: AbortSignal) => {
      const stream = await this.sdk.chat.completions.create(streamingBody(body, this.streamSupport), { signal, timeout: timeoutMs });
      return readStream(stream, onText);
    };
    const run = () => this.call(attempt, timeoutMs, opts.retries ?? this.config.llmMaxRetries, log, opts.signal);
    let res;
    try {
      res = await run();
    } catch (err) {
      if (!this.streamSupport.usageOption || !refusesStreamOptions((err as { cause?: unknown }).cause ?? err)) throw err;
      this.streamSupport.usageOption = false;
      log.warn('the LLM server refuses stream_options; streaming without usage figures from now on');
      res = await run();
    }
    if (res.usage && opts.account) this.report(opts.account, res.usage, log);
    return {
      content: res.content,
      toolCalls: readToolCalls(res.toolCalls),
      finishReason: res.finishReason,
      usage: res.usage,
      model: res.model ?? model,
    };
  }

  /** Embeddings are batched across chats: billed to the chat `*` unless `account` says otherwise. */
  async embed(model: string, inputs: string[], dimensions?: number, account: UsageAccount = { chat: '*', kind: 'embeddings' }): Promise<number[][]> {
    const res = await this.call(
      async (signal) =>
        this.sdk.embeddings.create(
          { model, input: inputs, ...(dimensions ? { dimensions } : {}), encoding_format: 'float' },
          { signal, timeout: this.config.llmTimeoutMs },
        ),
      this.config.llmTimeoutMs,
      this.config.llmMaxRetries,
      this.log,
    );
    if (res.usage) this.report(account, { promptTokens: res.usage.prompt_tokens ?? 0, cachedTokens: 0, completionTokens: 0 }, this.log);
    return res.data.map((d) => d.embedding as number[]);
  }

  /**
   * Speech to text (transcribe.ts), billed to `chat` as kind `transcription`. Not held back by
   * the daily budget's gate: the message it belongs to passed the budget check already.
   */
  async transcribe(chat: string, req: TranscriptionRequest): Promise<TranscriptionResult> {
    const r = await transcribeAudio(this.sdk, req);
    if (r.ok) this.report({ chat, kind: 'transcription' }, r.usage, this.log);
    return r;
  }

  private report(account: UsageAccount, usage: TokenUsage, log: Logger): void {
    try {
      this.usageSink?.(account, usage);
    } catch (err) {
      log.warn({ err }, 'could not record token usage');
    }
  }

  /** One attempt per try, each under a hard timeout; failures mapped to LlmError. */
  private async call<T>(fn: (signal: AbortSignal) => Promise<T>, timeoutMs: number, retries: number, log: Logger, outer?: AbortSignal): Promise<T> {
    return withRetry(
      async () => {
        const ac = new AbortController();
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          ac.abort();
        }, timeoutMs);
        const stop = () => ac.abort();
        outer?.addEventListener('abort', stop, { once: true });
        if (outer?.aborted) ac.abort();
        try {
          return await fn(ac.signal);
        } catch (err) {
          // Keep the raw error for classification; a timeout of ours looks like a user abort.
          if (timedOut) throw toLlmError(err, true);
          throw err;
        } finally {
          clearTimeout(timer);
          outer?.removeEventListener('abort', stop);
        }
      },
      {
        signal: outer,
        retries,
        classify: (err) => (err instanceof LlmError ? { retry: err.code === 'llm.timeout' } : classifyLlmError(err)),
        onRetry: ({ attempt, delayMs, err }) =>
          log.warn({ attempt, delayMs, code: toLlmError(err, false).code }, 'LLM call failed, retrying'),
      },
    ).catch((err: unknown) => {
      throw toLlmError(err, false);
    });
  }
}
