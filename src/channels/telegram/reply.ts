/**
 * The way back for one message: through its streaming preview when there is one (the preview
 * then finishes the answer, stream-preview.ts), else as one delivery of the whole answer.
 */
import type { ReplyFn } from '../../core/channel.js';
import type { Delivery, SendOptions } from './delivery.js';
import type { StreamPreview } from './stream-preview.js';

/** `before` runs as the answer goes out (the typing indicator stops). */
export function replyThrough(
  delivery: Delivery,
  chatId: string,
  send: SendOptions,
  preview: StreamPreview | undefined,
  before: () => void = () => undefined,
): ReplyFn {
  const reply: ReplyFn = async (text: string) => {
    before();
    if (preview) await preview.finish(text, send);
    else await delivery.sendMarkdown(chatId, text, send);
  };
  if (preview) reply.progress = preview;
  // A line beside the answer (a notice, a refusal): plain text, to the same chat and topic.
  reply.aside = async (text) => void (await delivery.sendPlain(chatId, text, send));
  return reply;
}
