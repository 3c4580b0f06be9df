import type { Turn } from '../pipeline/turn.js';
import type { JsonSchema } from './schema.js';

export interface ToolContext {
  turn: Turn;
  /** Aborted when the tool's timeout passes; long tools should stop early. */
  signal: AbortSignal;
}

/** A function the model may call. `execute` returns the text the model sees as the result. */
export interface Tool<A = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: JsonSchema & { type: 'object' };
  execute(args: A, ctx: ToolContext): Promise<string> | string;
}
