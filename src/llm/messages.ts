/**
 * Session messages → the OpenAI chat request shape. The list is repaired first (see
 * sessions/integrity.ts) so a session interrupted mid-tool-loop still makes a valid request.
 */
import type { ChatCompletionContentPartImage, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { reminderNote, type SessionMessage } from '../sessions/model.js';
import { repairToolPairs } from '../sessions/integrity.js';

/**
 * One request object per stored message, reused on every turn: a 1,000-message session no
 * longer allocates 1,000 objects per request, and token counts cached by object (tokens.ts)
 * stay valid. A stored message's text never changes; nothing mutates these objects.
 */
const apiForm = new WeakMap<SessionMessage, ChatCompletionMessageParam>();

export function toApiMessage(m: SessionMessage): ChatCompletionMessageParam {
  let api = apiForm.get(m);
  if (!api) {
    api = convert(m);
    apiForm.set(m, api);
  }
  return api;
}

function convert(m: SessionMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return { role: 'user', content: m.content };
    case 'assistant':
      // The user's words the bot delivered: given as a user's note, not as the model's turn.
      if (m.reminder !== undefined) return { role: 'user', content: reminderNote(m) };
      if (m.toolCalls && m.toolCalls.length > 0) {
        return {
          role: 'assistant',
          content: m.content || null,
          tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
        };
      }
      return { role: 'assistant', content: m.content };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.content };
  }
}

/**
 * The request: the system prompt, the history, and — when given — this message's own context as
 * a system message just before `perTurn.before` (the user's message of the turn; the last user
 * message if it is no longer there). That message is built per request, never stored: the next
 * turn's request starts with this one's history unchanged, a prefix the provider can cache.
 * `perTurn.images` go with that user message as content parts (its text, then the images);
 * every other message, older photos included, is sent as its stored text.
 */
export function buildRequestMessages(
  systemPrompt: string,
  history: SessionMessage[],
  perTurn?: { content: string; before: SessionMessage; images?: ChatCompletionContentPartImage[] | undefined } | undefined,
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (systemPrompt) out.push({ role: 'system', content: systemPrompt });
  const repaired = repairToolPairs(history);
  let at = -1;
  const images = perTurn?.images ?? [];
  if (perTurn?.content || images.length > 0) {
    at = repaired.lastIndexOf(perTurn!.before);
    if (at < 0) at = repaired.findLastIndex((m) => m.role === 'user');
  }
  repaired.forEach((m, i) => {
    if (i === at && perTurn!.content) out.push({ role: 'system', content: perTurn!.content });
    const withImages = i === at && m.role === 'user' && images.length > 0;
    out.push(withImages ? { role: 'user', content: [{ type: 'text', text: m.content }, ...images] } : toApiMessage(m));
  });
  return out;
}
