/**
 * Photos and images sent as files, on Telegram. A photo arrives in several sizes: the largest
 * one within 2048 pixels and 10 MB is taken (models scale anything bigger down to 2048 anyway,
 * so more pixels would cost download time and nothing else). An image sent as a document
 * (image/* MIME type) is taken as it is, up to the Bot API's 20 MB download limit.
 *
 * The channel only describes the image (an ImageRef); what can be seen of it is decided in the
 * turn (features/images/images.ts), after the limits every message meets.
 */
import type { Message } from 'telegraf/types';
import { imagePlaceholder } from '../../media/attachments.js';
import type { ImageRef } from '../../core/message.js';
import { withQuote, type QuotedMessage } from './reply-context.js';

export const MAX_PHOTO_SIDE = 2048;
export const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

interface PhotoSize {
  file_id: string;
  width: number;
  height: number;
  file_size?: number;
}

/** The photo or image document of a message, or undefined (other documents are left to the caption). */
export function imageOf(m: Message & Record<string, any>): ImageRef | undefined {
  if (Array.isArray(m.photo) && m.photo.length > 0) return photoRef(m.photo as PhotoSize[]);
  const d = m.document;
  if (!d || typeof d.file_id !== 'string') return undefined;
  const mime = typeof d.mime_type === 'string' ? d.mime_type.toLowerCase() : '';
  if (!mime.startsWith('image/')) return undefined;
  return {
    kind: 'document',
    fileId: d.file_id,
    fileSize: typeof d.file_size === 'number' ? d.file_size : undefined,
    mimeType: mime,
    fileName: typeof d.file_name === 'string' ? d.file_name : undefined,
  };
}

function photoRef(sizes: PhotoSize[]): ImageRef | undefined {
  const valid = sizes.filter((s) => s && typeof s.file_id === 'string' && typeof s.width === 'number' && typeof s.height === 'number');
  if (valid.length === 0) return undefined;
  const byArea = [...valid].sort((a, b) => a.width * a.height - b.width * b.height);
  const fits = byArea.filter((s) => Math.max(s.width, s.height) <= MAX_PHOTO_SIDE && (s.file_size ?? 0) <= MAX_PHOTO_BYTES);
  // Nothing small enough (Telegram always sends small sizes, but a forged update may not): the smallest.
  const pick = fits.at(-1) ?? byArea[0]!;
  return { kind: 'photo', fileId: pick.file_id, fileSize: pick.file_size, width: pick.width, height: pick.height, mimeType: 'image/jpeg' };
}

/** An album item's text: its placeholder and own caption (after a quote); the album's turn decides what the model sees. */
export function albumItemText(r: { image: ImageRef; caption: string | undefined; quote: QuotedMessage | undefined }): string {
  return withQuote(imagePlaceholder(r.image, r.caption), r.quote);
}
