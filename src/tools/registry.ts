/**
 * The tools offered to the model, and the one place a tool call is executed. Whatever goes
 * wrong — unknown name, arguments that are not JSON or break the schema, a throw, a timeout —
 * comes back as a result text the model can read and react to; it never fails the turn.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { UNNAMED_TOOL, type ToolCall } from '../sessions/model.js';
import { AppError, errorMessage, type ErrorCode } from '../core/errors.js';
import { validate } from './schema.js';
import { scrubSecrets } from '../core/log.js';
import type { Tool, ToolContext } from './types.js';

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

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  constructor(tools: Tool<any>[] = [], private readonly timeoutMs = 30_000) {
    for (const t of tools) this.register(t);
  }

  register(tool: Tool<any>): void {
    if (this.tools.has(tool.name)) throw new AppError('internal.bug', { problem: `tool ${tool.name} is registered twice` });
    this.tools.set(tool.name, tool as Tool);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Tool definitions in the shape the chat API takes. */
  definitions(): ChatCompletionTool[] {
    return [...this.tools.values()].map((t) => ({
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
    const tool = this.tools.get(call.name);
    if (call.name === UNNAMED_TOOL && !tool) {
      return done(`Error: the tool call had no function name. Call one of: ${this.names().join(', ') || 'none'}.`, 'tool.unknown');
    }
    if (!tool) {
      return done(`Error: there is no tool named "${call.name}". Available tools: ${this.names().join(', ') || 'none'}.`, 'tool.unknown');
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
    let timer: NodeJS.Timeout | undefined;
    let onDeadline: (() => void) | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        ac.abort();
        reject(new ToolTimeout());
      }, this.timeoutMs);
      // The turn's deadline: the tool is told to stop and its result is not waited for.
      onDeadline = () => {
        ac.abort();
        reject(deadline.reason);
      };
      if (deadline.aborted) onDeadline();
      else deadline.addEventListener('abort', onDeadline, { once: true });
    });
    try {
      const result = await Promise.race([Promise.resolve().then(() => tool.execute(args as Record<string, unknown>, { ...known, signal: ac.signal })), timeout]);
      return done(typeof result === 'string' ? result : JSON.stringify(result));
    } catch (err) {
      if (deadline.aborted) throw deadline.reason;
      if (err instanceof ToolTimeout) return done(`Error: the tool "${call.name}" did not finish within ${this.timeoutMs} ms.`, 'tool.timeout');
      ctx.log.warn({ tool: call.name, err }, 'tool threw');
      return done(`Error: the tool "${call.name}" failed: ${errorMessage(err)}`, 'tool.failed');
    } finally {
      clearTimeout(timer);
      if (onDeadline) deadline.removeEventListener('abort', onDeadline);
    }
  }
}

class ToolTimeout extends Error {}
