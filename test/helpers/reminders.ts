/** A fake model that schedules: the test says which tool calls a user message gets; tool results are echoed back. */
import { text, toolCalls, type RecordedRequest, type Responder } from './fake-llm.js';

export type PlannedCall = { name: string; args: unknown };

/**
 * Answers a user message with the tool calls `plan` returns for it (none: an echo), and the
 * round after the tools with "done: <each tool result>", so the test sees what the model saw.
 */
export function toolUser(plan: (userText: string, req: RecordedRequest) => PlannedCall[]): Responder {
  return (req) => {
    const msgs = req.body.messages as Array<{ role: string; content: unknown }>;
    const last = msgs.at(-1)!;
    if (last.role === 'tool') {
      const start = msgs.map((m) => m.role).lastIndexOf('assistant');
      return text(
        `done: ${msgs
          .slice(start + 1)
          .map((m) => String(m.content))
          .join(' || ')}`,
      );
    }
    const calls = plan(String(last.content), req);
    return calls.length > 0 ? toolCalls(calls) : text(`echo: ${String(last.content)}`);
  };
}

/** The tests' one polling wait (helpers/wait.ts), under the name the reminder tests import. */
