/**
 * Images that come with a message, as the rest of the daemon sees them: a reference (the
 * channel's file id and what the channel said about it), never the bytes. The reference
 * travels in the inbound message, so the inbox journal holds it and a turn recovered after a
 * restart downloads the image again; the session keeps it beside a short placeholder text.
 * Bytes are fetched per turn through the channel that knows the file id (`MediaFetchers`).
 */

import type { AudioRef, ImageRef, StoredAttachment } from '../core/message.js';
import { announcedReadable } from './image-info.js';

export type Download = { ok: true; bytes: Buffer; filePath: string } | { ok: false; reason: 'too_big' | 'failed'; detail: string };

/** Downloads one file of a channel by its id, refusing more than `maxBytes`; `signal` gives up early. */
export type FileFetcher = (fileId: string, maxBytes: number, signal?: AbortSignal) => Promise<Download>;

/** The most an image may weigh: the Bot API's download limit for bots. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/**
 * The channels' downloaders, by channel name. The app is built before its channels, which
 * register here once they have a client (main.ts); a turn of a channel with none (the
 * terminal) answers from the placeholder.
 */
export class MediaFetchers {
  private readonly fetchers = new Map<string, FileFetcher>();

  register(channel: string, fetcher: FileFetcher): void {
    this.fetchers.set(channel, fetcher);
  }

  get(channel: string): FileFetcher | undefined {
    return this.fetchers.get(channel);
  }
}

/**
 * The text an image stands for in the session and in every later request: `[Photo]` or
 * `[Image: name.png]`, then the caption. Later turns see this text only (the image itself goes
 * to the model once, with the message that brought it).
 */
export function imagePlaceholder(ref: ImageRef, caption: string | undefined, note?: string): string {
  const what = ref.kind === 'photo' ? 'Photo' : `Image${ref.fileName ? `: ${ref.fileName.slice(0, 80)}` : ''}`;
  return `[${what}${note ? `; ${note}` : ''}]${caption ? ` ${caption}` : ''}`;
}

/**
 * The text a file the bot cannot read (a PDF, a video…) stands for when words came with it:
 * `[File: report.pdf; attached, but not read: the bot cannot open this kind of file] caption`.
 * The model answers the words and knows a file came that it never saw, so it does not answer
 * as if it had read it; the session keeps the same text.
 */
export function unreadablePlaceholder(label: string, caption: string): string {
  return `[${label}; attached, but not read: the bot cannot open this kind of file] ${caption}`;
}

export function storedAttachment(ref: ImageRef | AudioRef): StoredAttachment {
  return { kind: ref.kind, fileId: ref.fileId };
}

/**
 * The message text with the note put into its image placeholder (`[Photo; note] caption`): what
 * the session keeps of an image the model never saw. A quote the message carries comes first
 * (as "> " lines, then a blank line), so the placeholder is the first one at the start of the
 * text or after a blank line.
 */
export function withImageNote(text: string, ref: ImageRef, note: string): string {
  const bare = imagePlaceholder(ref, undefined);
  const at = text.startsWith(bare) ? 0 : text.indexOf(`\n\n${bare}`) + 2;
  if (at === 1) return `${text} [${note}]`;
  return text.slice(0, at) + imagePlaceholder(ref, undefined, note) + text.slice(at + bare.length);
}

/**
 * Why this image cannot go to the model, decided without its bytes, as the one line the user
 * gets; undefined when it can. The line says what happened and what to do; the session keeps
 * the image's file id.
 */
export function imageRefusal(ref: ImageRef, vision: boolean): string | undefined {
  const what = ref.kind === 'photo' ? 'photo' : 'image';
  const saved = 'It is saved in our conversation';
  if (!vision) return `The model I use reads text only, so I can't look at your ${what}. ${saved}; describe it in words if you need an answer now.`;
  if (ref.fileSize !== undefined && ref.fileSize > MAX_IMAGE_BYTES) {
    return `Your ${what} is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MB, the most a bot can download from Telegram. Please send it as a photo, or a smaller file.`;
  }
  // The bytes decide in the end (image-info.ts); this only answers HEIC and the like at once.
  if (ref.kind === 'document' && !announcedReadable(ref.mimeType)) {
    return `I can read JPEG, PNG, GIF and WebP images, and this file is ${ref.mimeType}. ${saved}; send it as a photo instead (Telegram converts it).`;
  }
  return undefined;
}

/** An inbound message's image reference as read back from the journal, or undefined when unusable. */
export function readImageRef(v: unknown): ImageRef | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if ((o.kind !== 'photo' && o.kind !== 'document') || typeof o.fileId !== 'string' || o.fileId === '') return undefined;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
  return {
    kind: o.kind,
    fileId: o.fileId,
    fileSize: num(o.fileSize),
    width: num(o.width),
    height: num(o.height),
    mimeType: str(o.mimeType),
    fileName: str(o.fileName),
  };
}
