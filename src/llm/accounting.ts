/**
 * What one LLM call cost and whom it is billed to, in the daemon's terms. The client reports
 * every response's usage in this shape; the usage store (src/features/usage/) adds it up per chat and day.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { TokenCounter } from './tokens.js';

export const USAGE_KINDS = ['answer', 'summary', 'consolidation', 'facts', 'reflection', 'embeddings', 'transcription'] as const;
export type UsageKind = (typeof USAGE_KINDS)[number];

/** Who a call is billed to: the chat (session key `channel:chatId`, or a memory scope) and why. */
export interface UsageAccount {
  chat: string;
  kind: UsageKind;
}

export interface TokenUsage {
  promptTokens: number;
  /** Part of promptTokens the server served from its prompt cache (0 when not reported). */
  cachedTokens: number;
  completionTokens: number;
  /** Seconds of audio transcribed (speech-to-text bills by duration); absent for other calls. */
  audioSeconds?: number | undefined;
  /** Counted by the daemon (`estimateUsage`), not reported by the server. */
  estimated?: boolean | undefined;
}

/** A completion's `usage` as the API reports it (streamed or not), in our terms. */
export function toTokenUsage(u: {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}): TokenUsage {
  return { promptTokens: u.prompt_tokens ?? 0, cachedTokens: u.prompt_tokens_details?.cached_tokens ?? 0, completionTokens: u.completion_tokens ?? 0 };
}

/**
 * What a call cost that ended without the server's `usage`: stopped (/stop), cut by a deadline
 * (TURN_TIMEOUT_MS, LLM_TIMEOUT_MS), its stream cut off, or a server that never reports usage.
 * The server was sent the whole prompt and generated at least what arrived, so that is what is
 * counted — with the model's tokenizer, the way the daemon counts its requests (tokens.ts) —
 * and marked as an estimate. Without it a stopped answer cost nothing here, and
 * DAILY_TOKEN_BUDGET could be dodged by stopping every answer after its first words.
 */
export function estimateUsage(
  tokens: TokenCounter,
  request: { messages: ChatCompletionMessageParam[]; tools?: ChatCompletionTool[] | undefined },
  output: string,
): TokenUsage {
  return {
    promptTokens: tokens.countMessages(request.messages) + tokens.countTools(request.tools ?? []),
    cachedTokens: 0,
    completionTokens: tokens.countText(output),
    estimated: true,
  };
}

/** What a model generated, as one text to count: its answer and its tool calls (name and arguments). */
export function outputText(content: string, calls: Iterable<{ name: string; arguments: string }>): string {
  return [content, ...[...calls].map((c) => `${c.name} ${c.arguments}`)].join('\n');
}
