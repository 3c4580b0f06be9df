/**
 * Token counting for budgets and /status. Until an exact tokenizer is wired in, this is the
 * seed's estimate: characters / 3.5, plus a small per-message overhead for the chat framing.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

export type TokenizerMode = 'exact' | 'estimate';

export interface TokenCounter {
  readonly mode: TokenizerMode;
  readonly encoding: string | null;
  countText(text: string): number;
  countMessages(messages: ChatCompletionMessageParam[]): number;
  countTools(tools: ChatCompletionTool[]): number;
}

const PER_MESSAGE = 4;

function messageText(m: ChatCompletionMessageParam): string {
  let s = typeof m.content === 'string' ? m.content : m.content ? JSON.stringify(m.content) : '';
  if (m.role === 'assistant' && m.tool_calls) s += JSON.stringify(m.tool_calls);
  return s;
}

export class EstimateCounter implements TokenCounter {
  readonly mode = 'estimate' as const;
  readonly encoding = null;
  countText(text: string): number {
    return Math.ceil(text.length / 3.5);
  }
  countMessages(messages: ChatCompletionMessageParam[]): number {
    let n = 3;
    for (const m of messages) n += PER_MESSAGE + this.countText(messageText(m));
    return n;
  }
  countTools(tools: ChatCompletionTool[]): number {
    return tools.length === 0 ? 0 : this.countText(JSON.stringify(tools));
  }
}
