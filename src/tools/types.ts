import type { Logger } from '../core/log.js';
import type { JsonSchema } from './schema.js';

/** The chat a call comes from, as the tools see it. */
export interface ToolChat {
  channel: string;
  chatId: string;
  /** Several people talk there (a Telegram group or supergroup): tools that reach outside are off unless allowed. */
  group: boolean;
  /**
   * The sender may manage the chat's shared memory: an owner, a group admin (GROUP_ADMINS_MANAGE),
   * the user of a private chat — who may run /memory and /reminders cancel. A group member may
   * not, and so neither may the model on their behalf (`access: 'managers'` tools).
   */
  manages: boolean;
}

/** What a tool knows of the call: the chat it came from, never the pipeline's turn. */
export interface ToolContext {
  /** The chat the call came from: a tool acts on this chat's memory and reminders only. */
  chat: ToolChat;
  /** The chat's current conversation id (a new one after /new); facts a tool saves carry it. */
  conversationId: string;
  log: Logger;
  /**
   * The turn the call belongs to: the calls of one turn share it (memory_rewrite judges them all
   * against MEMORY.md as the turn found it). Unset outside a turn.
   */
  turnId?: string | undefined;
  /** Aborted when the tool's timeout passes or the turn's deadline: long tools should stop early. */
  signal: AbortSignal;
  /**
   * The `untrusted` tools whose output the model had read in this turn when it made this call
   * (empty or unset: none): the call may be that text's doing, so a memory write is held for the
   * owner's approval (features/memory-access/pending.ts).
   */
  afterUntrusted?: readonly string[] | undefined;
  /** The words of the user's message the turn answers: a memory write they asked for in so many words is theirs. */
  userText?: string | undefined;
}

/** A function the model may call. `execute` returns the text the model sees as the result. */
export interface Tool<A = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: JsonSchema & { type: 'object' };
  /** Its own deadline (an MCP server's `timeoutMs`); unset: TOOL_TIMEOUT_MS. */
  timeoutMs?: number | undefined;
  /** `managers`: what the matching command is (shows the shared memory whole, or changes it for everyone); unset: everyone. */
  access?: 'everyone' | 'managers' | undefined;
  /** Its output is text from outside the bot (an MCP server's): data, never instructions (see `afterUntrusted`). */
  untrusted?: boolean | undefined;
  /**
   * It changes something that outlives the turn (sets a reminder, writes memory): when an earlier
   * run of the same message made this call with the same arguments and died before its turn was
   * saved, the call is not made again (features/answer/loop.ts). Unset: a call that only reads is
   * simply made again.
   */
  once?: boolean | undefined;
  execute(args: A, ctx: ToolContext): Promise<string> | string;
}

/**
 * Tools that come and go (an MCP server's, while it is connected) and differ per chat. The
 * registry asks its sources each time it lists or looks up a tool.
 */
export interface ToolSource {
  /** The tools offered to `chat` now; without a chat, every tool some chat could be offered (for sizing the request). */
  list(chat?: ToolChat): Tool[];
  /** The tool `name` as `chat` may call it: may answer for a tool not listed now (its server is down). */
  find(name: string, chat: ToolChat): Tool | undefined;
}
