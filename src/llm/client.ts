/**
 * LlmClient: chat completions and embeddings through the official `openai` SDK, pointed at
 * OpenAI or any compatible server by OPENAI_BASE_URL. The SDK's own retries are off: each
 * request goes through attempt.ts (our timeout over the whole response, our retries honouring
 * retry-after, shared with Telegram); the shapes of a call are in call.ts.
 *
 * Models: LLM_MODEL and LLM_MODEL_BALANCED by tier, or the model a chat chose (/model, any of
 * LLM_MODELS, each on the default server or its own); LLM_FALLBACK is tried, in order, when the
 * model asked fails for a reason that is not the request's (errors.ts, fallsOver). This is the
 * one place that decides it, for answers and background calls alike.
 */
import OpenAI from 'openai';
import { NO_API_KEY } from '../config/env.js';
import { uniqueNames } from '../config/models.js';
import type { Logger } from '../core/log.js';
import { callLlm } from './attempt.js';
import { LlmError, fallsOver, toLlmError } from './errors.js';
import { estimateUsage, outputText, toTokenUsage, type TokenUsage, type UsageAccount } from './accounting.js';
import { readStream, refusesStreamOptions, streamingBody, streamSoFar, type StreamSupport } from './stream.js';
import { EstimateCounter, type TokenCounter } from './tokens.js';
import {
  isReasoningModel,
  readToolCalls,
  type ChatCallOptions,
  type ChatResult,
  type LlmClientConfig,
  type LlmObservers,
  type ModelTier,
  type UsageSink,
} from './call.js';
import { transcribeAudio, type TranscriptionRequest, type TranscriptionResult } from './transcribe.js';

/** One server a model is reached on: its SDK client, and what it turned out to accept when streaming. */
interface Endpoint {
  sdk: OpenAI;
  stream: StreamSupport;
}

export class LlmClient {
  /** The default server's client (OPENAI_BASE_URL): transcription and embeddings use it too. */
  readonly sdk: OpenAI;
  private readonly usageSink: UsageSink | undefined;
  private readonly gate: ((account: UsageAccount) => boolean | Promise<boolean>) | undefined;
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
    if (opts.account && (await this.gate?.(opts.account))) {
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
    const res = await callLlm(
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
    const run = () => callLlm(attempt, timeoutMs, opts.retries ?? this.config.llmMaxRetries, log, opts.signal);
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
    const res = await callLlm(
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
}
