/**
 * The way back for one message: through its streaming preview when there is one (the preview
 * then finishes the answer, stream-preview.ts), else as one delivery of the whole answer.
 */
import type { Reply } from '../../core/channel.js';
import type { Delivery, SendOptions } from './delivery.js';
import type { StreamPreview } from './stream-preview.js';

export interface ReplyOptions {
  /** Runs as the answer or a file goes out (the typing indicator stops). */
  before?: () => void;
  /** Files go out as documents (a live message; a recovered one's /export is written to the workspace). */
  documents?: boolean;
}

export function replyThrough(delivery: Delivery, chatId: string, send: SendOptions, preview: StreamPreview | undefined, opts: ReplyOptions = {}): Reply {
  const before = opts.before ?? (() => undefined);
  return {
    documents: opts.documents === true,
    progress: preview,
    async send(out) {
      switch (out.kind) {
        case 'text':
          before();
          if (preview) await preview.finish(out.text, send);
          else await delivery.sendMarkdown(chatId, out.text, send);
          return;
        case 'aside':
          // A line beside the answer (a notice, a refusal): plain text, to the same chat and topic.
          await delivery.sendPlain(chatId, out.text, send);
          return;
        case 'document':
          before();
          preview?.close();
          await delivery.sendDocument(chatId, out.document, send);
      }
    },
  };
}
