import type { Logger } from '../core/log.js';
import type { JsonSchema } from './schema.js';

/** What a tool knows of the call: the chat it came from, never the pipeline's turn. */
export interface ToolContext {
  /** The chat the call came from: a tool acts on this chat's memory and reminders only. */
  chat: { channel: string; chatId: string };
  /** The chat's current conversation id (a new one after /new); facts a tool saves carry it. */
  conversationId: string;
  log: Logger;
  /** Aborted when the tool's timeout passes or the turn's deadline: long tools should stop early. */
  signal: AbortSignal;
}

/** A function the model may call. `execute` returns the text the model sees as the result. */
export interface Tool<A = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: JsonSchema & { type: 'object' };
  execute(args: A, ctx: ToolContext): Promise<string> | string;
}
