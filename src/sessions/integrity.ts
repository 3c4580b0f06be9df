/**
 * Rules that keep a message list acceptable to the OpenAI chat API whatever we cut from it:
 * every `tool` message follows the assistant message that called it, and every tool call has
 * a result. Compaction and the request builder both rely on these.
 */
import type { SessionMessage } from './model.js';

/**
 * Index where a kept tail of about `keepLast` messages may start without separating tool
 * results from the assistant message that requested them (the tail grows backwards if needed).
 */
export function tailStart(messages: SessionMessage[], keepLast: number): number {
  let start = Math.max(0, messages.length - Math.max(0, keepLast));
  while (start > 0 && start < messages.length && messages[start]!.role === 'tool') start--;
  return start;
}

/**
 * Repairs a list for sending: drops tool results whose call is not in the preceding assistant
 * message, and adds a placeholder result for calls left unanswered (a crash mid-tool-loop).
 */
export function repairToolPairs(messages: SessionMessage[]): SessionMessage[] {
  const out: SessionMessage[] = [];
  let open: Map<string, string> | null = null; // call id → tool name, for the current group
  const closeGroup = () => {
    if (open) {
      for (const [id, name] of open) {
        out.push({
          id: `${id}_missing`,
          role: 'tool',
          content: 'No result: the tool run was interrupted.',
          timestamp: new Date(0).toISOString(),
          toolCallId: id,
          toolName: name,
        });
      }
    }
    open = null;
  };
  for (const m of messages) {
    if (m.role === 'tool') {
      if (open && m.toolCallId && open.has(m.toolCallId)) {
        open.delete(m.toolCallId);
        out.push(m);
      }
      continue;
    }
    closeGroup();
    out.push(m);
    if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
      open = new Map(m.toolCalls.map((c) => [c.id, c.name]));
    }
  }
  closeGroup();
  return out;
}
