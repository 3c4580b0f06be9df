/**
 * Photos and images sent as files, on Telegram. A photo arrives in several sizes: the largest
 * one within 2048 pixels and 10 MB is taken (models scale anything bigger down to 2048 anyway,
 * so more pixels would cost download time and nothing else). An image sent as a document
 * (image/* MIME type) is taken as it is, up to the Bot API's 20 MB download limit.
 *
 * The channel decides up front what it can without downloading: a text-only model, a format
 * the model cannot read, a file over the limit. Each gets one line, and the session keeps the
 * placeholder with the file id (keep.ts), so nothing the user sent is lost.
 */
import type { Message } from 'telegraf/types';
import { imagePlaceholder, MAX_IMAGE_BYTES } from '../../media/attachments.js';
import { type ImageRef } from '../../core/message.js';
import { withQuote, type QuotedMessage } from './reply-context.js';
import { announcedReadable } from '../../media/image-info.js';

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

/**
 * Why this image cannot go to the model, as the one line the user gets, or undefined when it
 * can. The line says what happened and what to do; the session keeps the image's file id.
 */
export function imageRefusal(ref: ImageRef, vision: boolean): string | undefined {
  const what = ref.kind === 'photo' ? 'photo' : 'image';
  const saved = 'It is saved in our conversation';
  if (!vision) return `The model I use reads text only, so I can't look at your ${what}. ${saved}; describe it in words if you need an answer now.`;
  if (ref.fileSize !== undefined && ref.fileSize > MAX_IMAGE_BYTES) {
    return `Your ${what} is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MB, the most a bot can download from Telegram. Please send it as a photo, or a smaller file.`;
  }
  // The bytes decide in the end (media/image-info.ts); this only answers HEIC and the like at once.
  if (ref.kind === 'document' && !announcedReadable(ref.mimeType)) {
    return `I can read JPEG, PNG, GIF and WebP images, and this file is ${ref.mimeType}. ${saved}; send it as a photo instead (Telegram converts it).`;
  }
  return undefined;
}

/** An album item's text: its placeholder and own caption (after a quote); the album's turn decides what the model sees. */
export function albumItemText(r: { image: ImageRef; caption: string | undefined; quote: QuotedMessage | undefined }): string {
  return withQuote(imagePlaceholder(r.image, r.caption), r.quote);
}

/**
 * The message text for an image: its placeholder and caption (after a quote, if it replies to
 * something), and — when it cannot go to the model — the line for the user, in which case the
 * text also names the file id, so the session shows how to get the image back.
 */
export function imageMessage(
  r: { image: ImageRef; caption: string | undefined; quote: QuotedMessage | undefined },
  vision: boolean,
): { text: string; refusal?: string | undefined } {
  const refusal = imageRefusal(r.image, vision);
  const note = refusal ? `not shown to the model; Telegram file_id: ${r.image.fileId}` : undefined;
  return { text: withQuote(imagePlaceholder(r.image, r.caption, note), r.quote), refusal };
}
