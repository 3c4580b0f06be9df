/**
 * Streamed chat completions: reads the SDK's server-sent chunks and puts them back together
 * into the same shape a non-streamed call returns, reporting the text as it grows.
 *
 * Tool calls arrive in pieces: each delta names the call by `index`; its id and name come once,
 * its `arguments` JSON in fragments that are only valid once joined. They are kept per index
 * and handed to readToolCalls as if they had arrived whole.
 *
 * Usage: asked for with `stream_options.include_usage` (one last chunk with no choices). A
 * server that ignores it simply sends none (usage stays null, as for a non-streamed answer
 * without `usage`); one that refuses the field with a 400 naming it is asked again without it,
 * and remembered (see `StreamSupport`).
 */
import type OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { LlmError } from './errors.js';
import { toTokenUsage, type TokenUsage } from './accounting.js';

export interface StreamedMessage {
  content: string;
  /** Raw tool calls in the non-streamed wire shape, for readToolCalls. */
  toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  finishReason: string | null;
  usage: TokenUsage | null;
  model: string | undefined;
}

/** Per client: whether the server took `stream_options` (learned from its first refusal). */
export interface StreamSupport {
  usageOption: boolean;
}

/** A 400 that names the field: an older server that does not know `stream_options`. */
export function refusesStreamOptions(err: unknown): boolean {
  const e = err as { status?: unknown; message?: unknown };
  return e?.status === 400 && typeof e.message === 'string' && /stream_options|include_usage/i.test(e.message);
}

/**
 * What a stream delivered so far, kept up to date as its events arrive: a stream that ends early
 * (stopped, timed out, cut off) is still accounted for from it (llm/accounting.ts).
 */
export interface StreamSoFar {
  content: string;
  /** Tool calls by index, their arguments as joined so far. */
  calls: Map<number, { id: string; name: string; arguments: string }>;
  usage: TokenUsage | null;
}

export function streamSoFar(): StreamSoFar {
  return { content: '', calls: new Map(), usage: null };
}

/** Reads one streamed completion to its end, calling `onText` with the text so far (and keeping `soFar` up to date). */
export async function readStream(
  stream: AsyncIterable<ChatCompletionChunk>,
  onText: (soFar: string) => void,
  soFar: StreamSoFar = streamSoFar(),
): Promise<StreamedMessage> {
  let finishReason: string | null = null;
  let model: string | undefined;
  let chunks = 0;
  const calls = soFar.calls;
  for await (const chunk of stream) {
    chunks++;
    model ??= chunk.model;
    if (chunk.usage) soFar.usage = toTokenUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (!delta) continue;
    if (typeof delta.content === 'string' && delta.content.length > 0) {
      soFar.content += delta.content;
      onText(soFar.content);
    }
    for (const [i, d] of (delta.tool_calls ?? []).entries()) {
      // Servers that omit `index` send each call whole in one delta: its place in the list says which.
      const key = typeof d.index === 'number' ? d.index : i;
      const call = calls.get(key) ?? { id: '', name: '', arguments: '' };
      if (d.id) call.id = d.id;
      if (d.function?.name) call.name += d.function.name;
      if (d.function?.arguments) call.arguments += d.function.arguments;
      calls.set(key, call);
    }
  }
  const { content, usage } = soFar;
  if (chunks === 0) {
    // A server that answered stream: true with something other than events (or nothing at all).
    throw new LlmError('llm.bad_response', 'rejected', 'the LLM server sent no streamed events; set STREAMING=off if it cannot stream');
  }
  const toolCalls = [...calls.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, c]) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
  return { content, toolCalls, finishReason, usage, model };
}

/** Streaming request body from a non-streamed one. */
export function streamingBody(
  body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
  support: StreamSupport,
): OpenAI.Chat.ChatCompletionCreateParamsStreaming {
  return { ...body, stream: true, ...(support.usageOption ? { stream_options: { include_usage: true } } : {}) };
}

/** The short line shown while a tool runs, by the tool's name. */
export function toolStatus(name: string): string {
  // An MCP server's tool (<server>__<tool>): its words say nothing about our memory.
  const server = /^(.+?)__/.exec(name)?.[1];
  if (server) return `🔌 asking ${server}…`;
  if (/search|recall|find/i.test(name)) return '🔎 searching memory…';
  if (/remind|schedul/i.test(name)) return '⏰ checking reminders…';
  if (/read|stats|entity/i.test(name)) return '📖 reading memory…';
  if (/memory|note|fact/i.test(name)) return '📝 updating memory…';
  if (/time|date/i.test(name)) return '🕒 checking the time…';
  return '⚙️ working…';
}
