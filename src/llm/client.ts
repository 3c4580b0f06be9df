/**
 * LlmClient: chat completions and embeddings through the official `openai` SDK, pointed at
 * OpenAI or any compatible server by OPENAI_BASE_URL. The SDK's own retries are off: ours
 * (core/retry.ts) honour retry-after and are shared with Telegram. Each call has a hard
 * timeout of our own that covers the whole response, body included.
 *
 * Models: LLM_MODEL and LLM_MODEL_BALANCED by tier, or the model a chat chose (/model, any of
 * LLM_MODELS, each on the default server or its own); LLM_FALLBACK is tried, in order, when the
 * model asked fails for a reason that is not the request's (errors.ts, fallsOver). This is the
 * one place that decides it, for answers and background calls alike.
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { NO_API_KEY, type Config } from '../config/env.js';
import { uniqueNames } from '../config/models.js';
import type { Logger } from '../core/log.js';
import { withRetry } from '../core/retry.js';
import { normalizeToolCall, type ToolCall } from '../sessions/model.js';
import { LlmError, classifyLlmError, fallsOver, toLlmError } from './errors.js';
import { estimateUsage, outputText, toTokenUsage, type TokenUsage, type UsageAccount } from './accounting.js';
import { readStream, refusesStreamOptions, streamingBody, streamSoFar, type StreamSupport } from './stream.js';
import { EstimateCounter, type TokenCounter } from './tokens.js';
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
  /** Set: the answer is streamed and this gets its text so far as it grows (llm/stream.ts); a fallback starts it again from nothing. */
  onText?: ((soFar: string) => void) | undefined;
  /** The model to ask (a chat's /model choice); unset: the tier's. */
  model?: string | undefined;
  /** false: this model only, no LLM_FALLBACK (the doctor checks one model). */
  fallback?: boolean | undefined;
  /** Before a fallback model is asked: the request fitted to that model's context, or undefined to send it as it is. */
  refit?: ((model: string) => Promise<ChatCompletionMessageParam[] | undefined>) | undefined;
}

/** Receives the `usage` of every accounted response, with the model that answered. */
export type UsageSink = (account: UsageAccount, usage: TokenUsage, model: string) => void;

export interface ChatResult {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: TokenUsage | null;
  /** The model that answered (its name as configured). */
  model: string;
  /** The model name the server reported in its answer (e.g. a dated version), when it gave one. */
  served: string | undefined;
  /** Set when a fallback answered: the model asked first. */
  fallbackFrom?: string | undefined;
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

/** One server a model is reached on: its SDK client, and what it turned out to accept when streaming. */
interface Endpoint {
  sdk: OpenAI;
  stream: StreamSupport;
}

/** What the app gives the client when it builds it (all optional: a CLI's client has none). */
export interface LlmObservers {
  /** Where the usage of accounted calls goes. A failing sink never fails a call. */
  usageSink?: UsageSink | undefined;
  /** True when a call billed to this account must not be made (daily token budget). */
  gate?: ((account: UsageAccount) => boolean) | undefined;
  /** A model's tokenizer, to estimate a call that ended without usage (unset or unknown: characters / 3.5). */
  tokensFor?: ((model: string) => TokenCounter | undefined) | undefined;
}

export type LlmClientConfig = Pick<Config, 'openaiApiKey' | 'openaiBaseUrl' | 'model' | 'modelBalanced' | 'llmTimeoutMs' | 'llmMaxRetries'> &
  Partial<Pick<Config, 'models' | 'fallback'>>;

export class LlmClient {
  /** The default server's client (OPENAI_BASE_URL): transcription and embeddings use it too. */
  readonly sdk: OpenAI;
  private readonly usageSink: UsageSink | undefined;
  private readonly gate: ((account: UsageAccount) => boolean) | undefined;
  private readonly tokensFor: ((model: string) => TokenCounter | undefined) | undefined;
  private roughTokens: TokenCounter | undefined;
  private readonly defaultEndpoint: Endpoint;
  /** LLM_MODELS entries with a server of their own, by lower-cased name. */
  private readonly own = new Map<string, { name: string; endpoint: Endpoint }>();

  constructor(
    private readonly config: LlmClientConfig,
    private readonly log: Logger,
    observers: LlmObservers = {},
  ) {
    this.usageSink = observers.usageSink;
    this.gate = observers.gate;
    this.tokensFor = observers.tokensFor;
    const client = (baseURL: string | undefined, apiKey: string) =>
      new OpenAI({ apiKey, baseURL: baseURL ?? null, maxRetries: 0, timeout: config.llmTimeoutMs });
    this.sdk = client(config.openaiBaseUrl, config.openaiApiKey);
    this.defaultEndpoint = { sdk: this.sdk, stream: { usageOption: true } };
    const shared = new Map<string, Endpoint>();
    for (const m of config.models ?? []) {
      if (m.baseUrl === undefined) continue;
      const apiKey = m.apiKey ?? NO_API_KEY;
      // Models on one server with one key share a client (and what it learned about streaming).
      const key = JSON.stringify([m.baseUrl, apiKey]);
      let endpoint = shared.get(key);
      if (!endpoint) shared.set(key, (endpoint = { sdk: client(m.baseUrl, apiKey), stream: { usageOption: true } }));
      this.own.set(m.name.toLowerCase(), { name: m.name, endpoint });
    }
  }

  modelFor(tier: ModelTier = 'default'): string {
    return tier === 'balanced' ? this.config.modelBalanced : this.config.model;
  }

  /** The models tried for a call that asks `first`: it, then LLM_FALLBACK in order (each once). */
  chainFor(first: string): string[] {
    return uniqueNames(first, ...(this.config.fallback ?? []));
  }

  private endpointOf(model: string): Endpoint {
    return this.own.get(model.toLowerCase())?.endpoint ?? this.defaultEndpoint;
  }

  /**
   * One chat completion. It asks `model` (or the tier's model); when that fails in a way
   * another model may not — its server down, slow, out of its 429 budget, or refusing the
   * model — after its retries, the same request goes to the next model of LLM_FALLBACK
   * (`fallsOver`). A failure caused by the request itself (a 400, too long) is thrown at once.
   */
  async chat(opts: ChatCallOptions): Promise<ChatResult> {
    if (opts.account && this.gate?.(opts.account)) {
      throw new LlmError(
        'llm.budget_exhausted',
        'rejected',
        `${opts.account.kind} for ${opts.account.chat} not made: the chat has used its daily token budget`,
      );
    }
    const log = opts.log ?? this.log;
    const first = opts.model ?? this.modelFor(opts.tier);
    const chain = opts.fallback === false ? [first] : this.chainFor(first);
    let messages = opts.messages;
    for (let i = 0; ; i++) {
      const model = chain[i]!;
      try {
        if (i > 0 && opts.refit) messages = (await opts.refit(model)) ?? messages;
        const res = await this.chatOnce(model, { ...opts, messages }, log);
        if (i === 0) return res;
        log.info({ model, fallbackFrom: first, kind: opts.account?.kind, chat: opts.account?.chat }, `answered by ${model}, the fallback for ${first}`);
        return { ...res, fallbackFrom: first };
      } catch (err) {
        const next = chain[i + 1];
        if (next === undefined || opts.signal?.aborted || !fallsOver(err)) throw err;
        const e = toLlmError(err, false);
        log.warn({ model, next, code: e.code, status: e.status }, `${model} failed (${e.code}${e.status ? ` ${e.status}` : ''}); asking ${next} instead`);
      }
    }
  }

  /** The call to one model, with its retries. */
  private async chatOnce(model: string, opts: ChatCallOptions, log: Logger): Promise<ChatResult> {
    const endpoint = this.endpointOf(model);
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
    const timeoutMs = opts.timeoutMs ?? this.config.llmTimeoutMs;
    if (opts.onText) return this.chatStreamed(endpoint, body, opts.onText, timeoutMs, opts, log);
    const res = await this.call(
      async (signal) => {
        const sent = !signal.aborted;
        try {
          return await endpoint.sdk.chat.completions.create(body, { signal, timeout: timeoutMs });
        } catch (err) {
          // Let go of by us (/stop, a deadline) after it was sent: the server has the prompt.
          if (sent && signal.aborted) this.bill(opts, body, null, '', log);
          throw err;
        }
      },
      timeoutMs,
      opts.retries ?? this.config.llmMaxRetries,
      log,
      opts.signal,
    );
    const choice = res.choices?.[0];
    if (!choice?.message) {
      throw new LlmError('llm.bad_response', 'rejected', 'the LLM server answered without any choice');
    }
    const usage: TokenUsage | null = res.usage ? toTokenUsage(res.usage) : null;
    const msg = choice.message;
    const toolCalls = readToolCalls(msg.tool_calls);
    const content = typeof msg.content === 'string' ? msg.content : '';
    this.bill(opts, body, usage, outputText(content, toolCalls), log);
    return {
      content,
      toolCalls,
      finishReason: choice.finish_reason ?? null,
      usage,
      model,
      served: res.model,
    };
  }

  /**
   * The same call, streamed. The whole stream is read inside one attempt, so the hard timeout
   * covers it to its last event, and a retry starts the text again from nothing.
   */
  private async chatStreamed(
    endpoint: Endpoint,
    body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    onText: (soFar: string) => void,
    timeoutMs: number,
    opts: ChatCallOptions,
    log: Logger,
  ): Promise<ChatResult> {
    const attempt = async (signal: AbortSignal) => {
      const sent = !signal.aborted;
      const soFar = streamSoFar();
      let answering = false;
      try {
        const stream = await endpoint.sdk.chat.completions.create(streamingBody(body, endpoint.stream), { signal, timeout: timeoutMs });
        answering = true;
        return await readStream(stream, onText, soFar);
      } catch (err) {
        // Stopped, timed out or cut off once the server had the request: it cost the prompt
        // and what it generated so far (each attempt of a retry its own).
        if (soFar.usage || answering || (sent && signal.aborted)) this.bill(opts, body, soFar.usage, outputText(soFar.content, soFar.calls.values()), log);
        throw err;
      }
    };
    const run = () => this.call(attempt, timeoutMs, opts.retries ?? this.config.llmMaxRetries, log, opts.signal);
    let res;
    try {
      res = await run();
    } catch (err) {
      if (!endpoint.stream.usageOption || !refusesStreamOptions((err as { cause?: unknown }).cause ?? err)) throw err;
      endpoint.stream.usageOption = false;
      log.warn({ model: body.model }, 'the LLM server refuses stream_options; streaming without usage figures from now on');
      res = await run();
    }
    // A server that sends no usage (it ignores or refused stream_options) is counted by us.
    const toolCalls = readToolCalls(res.toolCalls);
    this.bill(opts, body, res.usage, outputText(res.content, toolCalls), log);
    return {
      content: res.content,
      toolCalls,
      finishReason: res.finishReason,
      usage: res.usage,
      model: body.model,
      served: res.model,
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
    if (res.usage) this.report(account, { promptTokens: res.usage.prompt_tokens ?? 0, cachedTokens: 0, completionTokens: 0 }, model, this.log);
    return res.data.map((d) => d.embedding as number[]);
  }

  /**
   * Speech to text (transcribe.ts), billed to `chat` as kind `transcription`. Not held back by
   * the daily budget's gate: the message it belongs to passed the budget check already.
   */
  async transcribe(chat: string, req: TranscriptionRequest): Promise<TranscriptionResult> {
    const r = await transcribeAudio(this.sdk, req);
    if (r.ok) this.report({ chat, kind: 'transcription' }, r.usage, req.model, this.log);
    return r;
  }

  /**
   * Records what an accounted chat call cost: the server's `usage`, or without it our count of
   * the request and of `output`, what the model generated (accounting.ts, estimateUsage).
   */
  private bill(opts: ChatCallOptions, body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, usage: TokenUsage | null, output: string, log: Logger): void {
    if (!opts.account) return;
    let cost = usage;
    if (!cost) {
      try {
        cost = estimateUsage(this.tokensFor?.(body.model) ?? (this.roughTokens ??= new EstimateCounter()), body, output);
      } catch (err) {
        log.warn({ err }, 'could not estimate token usage');
        return;
      }
      log.debug(
        { model: body.model, chat: opts.account.chat, promptTokens: cost.promptTokens, completionTokens: cost.completionTokens },
        'no usage from the server for this call; recording an estimate',
      );
    }
    this.report(opts.account, cost, body.model, log);
  }

  private report(account: UsageAccount, usage: TokenUsage, model: string, log: Logger): void {
    try {
      this.usageSink?.(account, usage, model);
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
        onRetry: ({ attempt, delayMs, err }) => log.warn({ attempt, delayMs, code: toLlmError(err, false).code }, 'LLM call failed, retrying'),
      },
    ).catch((err: unknown) => {
      throw toLlmError(err, false);
    });
  }
}
