/**
 * The way back for one message: through its streaming preview when there is one (the preview
 * then finishes the answer, stream-preview.ts), else as one delivery of the whole answer. The
 * ids of the messages the texts went out as are kept (`sent`): `/why` sent as a reply to one of
 * them finds the answer it explains.
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
  const sent: string[] = [];
  return {
    documents: opts.documents === true,
    progress: preview,
    buttons: true,
    sent,
    async send(out) {
      switch (out.kind) {
        case 'text': {
          before();
          const ids: number[] = [];
          const options = out.buttons ? { ...send, buttons: out.buttons } : send;
          try {
            if (preview) await preview.finish(out.text, options, ids);
            else ids.push(...(await delivery.sendMarkdown(chatId, out.text, options)).messageIds);
          } finally {
            sent.push(...ids.map(String));
          }
          return;
        }
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
