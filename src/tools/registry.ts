/**
 * The tools offered to the model, and the one place a tool call is executed. Whatever goes
 * wrong — unknown name, arguments that are not JSON or break the schema, a throw, a timeout —
 * comes back as a result text the model can read and react to; it never fails the turn.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { UNNAMED_TOOL, type ToolCall } from '../sessions/model.js';
import { AppError, errorMessage, isAppError, type ErrorCode } from '../core/errors.js';
import { validate } from './schema.js';
import { scrubSecrets } from '../core/log.js';
import type { Tool, ToolChat, ToolContext, ToolSource } from './types.js';

export interface ToolOutcome {
  content: string;
  ok: boolean;
  code?: ErrorCode;
  durationMs: number;
}

/** One call's context as the caller knows it: the tool's own `signal` is made here, from `deadline`. */
export type ToolCallContext = Omit<ToolContext, 'signal'> & {
  /** The turn's deadline: the tool is told to stop and its result is not waited for. */
  deadline: AbortSignal;
};

/** A `managers` tool only for a sender who may manage the chat (as the matching command). */
function allowed(tool: Tool, chat: ToolChat): boolean {
  return tool.access !== 'managers' || chat.manages;
}

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private readonly sources: ToolSource[] = [];

  constructor(
    tools: Tool<any>[] = [],
    private readonly timeoutMs = 30_000,
  ) {
    for (const t of tools) this.register(t);
  }

  register(tool: Tool<any>): void {
    if (this.tools.has(tool.name)) throw new AppError('internal.bug', { problem: `tool ${tool.name} is registered twice` });
    this.tools.set(tool.name, tool as Tool);
  }

  /** How many tools are registered (a source's not counted). */
  get size(): number {
    return this.tools.size;
  }

  /** Tools that come and go, per chat (MCP servers). Their names must not clash with registered ones. */
  addSource(source: ToolSource): void {
    this.sources.push(source);
  }

  /** The tools `chat` is offered; without a chat, every tool some chat could be offered. */
  private offered(chat?: ToolChat): Tool[] {
    return [...this.tools.values(), ...this.sources.flatMap((s) => s.list(chat))].filter((t) => !chat || allowed(t, chat));
  }

  names(chat?: ToolChat): string[] {
    return this.offered(chat).map((t) => t.name);
  }

  /** Whether `name`, as `chat` would call it, answers with text from outside the bot (Tool.untrusted). */
  untrusted(name: string, chat: ToolChat): boolean {
    return this.find(name, chat)?.untrusted === true;
  }

  /** Whether `name`, as `chat` would call it, changes something that outlives the turn (Tool.once). */
  once(name: string, chat: ToolChat): boolean {
    return this.find(name, chat)?.once === true;
  }

  /** Whether `chat` is offered any tool whose output is text from outside the bot. */
  offersUntrusted(chat: ToolChat): boolean {
    return this.offered(chat).some((t) => t.untrusted === true);
  }

  private find(name: string, chat: ToolChat): Tool | undefined {
    return this.tools.get(name) ?? this.sources.map((s) => s.find(name, chat)).find((t) => t !== undefined);
  }

  /** Tool definitions in the shape the chat API takes: those `chat` is offered, or (no chat) the most any chat gets. */
  definitions(chat?: ToolChat): ChatCompletionTool[] {
    return this.offered(chat).map((t) => ({
      type: 'function' as const,
      function: { name: t.name, description: t.description, parameters: t.parameters as unknown as Record<string, unknown> },
    }));
  }

  async execute(call: ToolCall, ctx: ToolCallContext): Promise<ToolOutcome> {
    const { deadline, ...known } = ctx;
    const started = performance.now();
    const done = (content: string, code?: ErrorCode): ToolOutcome => ({
      // A tool result goes to the model and may be repeated to the chat: scrubbed like the log.
      content: scrubSecrets(content),
      ok: code === undefined,
      ...(code ? { code } : {}),
      durationMs: performance.now() - started,
    });
    const tool = this.find(call.name, known.chat);
    if (call.name === UNNAMED_TOOL && !tool) {
      return done(`Error: the tool call had no function name. Call one of: ${this.names(known.chat).join(', ') || 'none'}.`, 'tool.unknown');
    }
    if (!tool) {
      return done(`Error: there is no tool named "${call.name}". Available tools: ${this.names(known.chat).join(', ') || 'none'}.`, 'tool.unknown');
    }
    if (!allowed(tool, known.chat)) {
      return done(
        `Error: ${tool.name} is for the bot's owner (or a group admin) in this group; tell the user it was not done and that they can ask them.`,
        'tool.not_allowed',
      );
    }
    let args: unknown;
    try {
      args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (err) {
      return done(`Error: the arguments are not valid JSON (${errorMessage(err)}). Send a JSON object matching the tool's parameters.`, 'tool.bad_arguments');
    }
    const problem = validate(tool.parameters, args);
    if (problem) return done(`Error: invalid arguments: ${problem}.`, 'tool.bad_arguments');

    const ac = new AbortController();
    const timeoutMs = tool.timeoutMs ?? this.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    let onDeadline: (() => void) | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        ac.abort();
        reject(new ToolTimeout());
      }, timeoutMs);
      // The turn's deadline: the tool is told to stop and its result is not waited for.
      onDeadline = () => {
        ac.abort();
        reject(deadline.reason);
      };
      if (deadline.aborted) onDeadline();
      else deadline.addEventListener('abort', onDeadline, { once: true });
    });
    try {
      const result = await Promise.race([
        Promise.resolve().then(() => tool.execute(args as Record<string, unknown>, { ...known, signal: ac.signal })),
        timeout,
      ]);
      return done(typeof result === 'string' ? result : JSON.stringify(result));
    } catch (err) {
      if (deadline.aborted) throw deadline.reason;
      if (err instanceof ToolTimeout) return done(`Error: the tool "${call.name}" did not finish within ${timeoutMs} ms.`, 'tool.timeout');
      // A coded failure (an MCP server unreachable or saying no) keeps its code for the log line.
      const code = isAppError(err) ? err.code : 'tool.failed';
      ctx.log.warn({ tool: call.name, code, err }, 'tool threw');
      return done(`Error: the tool "${call.name}" failed: ${errorMessage(err)}`, code);
    } finally {
      clearTimeout(timer);
      if (onDeadline) deadline.removeEventListener('abort', onDeadline);
    }
  }
}

class ToolTimeout extends Error {}
