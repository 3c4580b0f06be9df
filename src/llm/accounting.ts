/**
 * What one LLM call cost and whom it is billed to, in the daemon's terms. The client reports
 * every response's usage in this shape; the usage store (src/usage/) adds it up per chat and day.
 */

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
}

/** A completion's `usage` as the API reports it (streamed or not), in our terms. */
export function toTokenUsage(u: { prompt_tokens?: number | null; completion_tokens?: number | null; prompt_tokens_details?: { cached_tokens?: number | null } | null }): TokenUsage {
  return { promptTokens: u.prompt_tokens ?? 0, cachedTokens: u.prompt_tokens_details?.cached_tokens ?? 0, completionTokens: u.completion_tokens ?? 0 };
}
