/**
 * One call to a chat model as the rest of the daemon sees it: what is asked (ChatCallOptions),
 * what comes back (ChatResult, its tool calls read defensively), and what the app gives the
 * client to watch and gate the calls (LlmObservers). client.ts makes the calls.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Config } from '../config/env.js';
import type { Logger } from '../core/log.js';
import { normalizeToolCall, type ToolCall } from '../sessions/model.js';
import type { TokenUsage, UsageAccount } from './accounting.js';
import type { TokenCounter } from './tokens.js';

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
export function readToolCalls(raw: unknown): ToolCall[] {
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

/** What the app gives the client when it builds it (all optional: a CLI's client has none). */
export interface LlmObservers {
  /** Where the usage of accounted calls goes. A failing sink never fails a call. */
  usageSink?: UsageSink | undefined;
  /** True when a call billed to this account must not be made (daily token budget). */
  gate?: ((account: UsageAccount) => boolean | Promise<boolean>) | undefined;
  /** A model's tokenizer, to estimate a call that ended without usage (unset or unknown: characters / 3.5). */
  tokensFor?: ((model: string) => TokenCounter | undefined) | undefined;
}

export type LlmClientConfig = Pick<Config, 'openaiApiKey' | 'openaiBaseUrl' | 'model' | 'modelBalanced' | 'llmTimeoutMs' | 'llmMaxRetries'> &
  Partial<Pick<Config, 'models' | 'fallback'>>;
