/**
 * Images that come with a message, as the rest of the daemon sees them: a reference (the
 * channel's file id and what the channel said about it), never the bytes. The reference
 * travels in the inbound message, so the inbox journal holds it and a turn recovered after a
 * restart downloads the image again; the session keeps it beside a short placeholder text.
 * Bytes are fetched per turn through the channel that knows the file id (`MediaFetchers`).
 */

import type { ImageRef, StoredAttachment } from '../core/message.js';

export type Download = { ok: true; bytes: Buffer; filePath: string } | { ok: false; reason: 'too_big' | 'failed'; detail: string };

/** Downloads one file of a channel by its id, refusing more than `maxBytes`. */
export type FileFetcher = (fileId: string, maxBytes: number) => Promise<Download>;

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

export function storedAttachment(ref: ImageRef): StoredAttachment {
  return { kind: ref.kind, fileId: ref.fileId };
}

/** An inbound message's image reference as read back from the journal, or undefined when unusable. */
export function readImageRef(v: unknown): ImageRef | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if ((o.kind !== 'photo' && o.kind !== 'document') || typeof o.fileId !== 'string' || o.fileId === '') return undefined;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
  return { kind: o.kind, fileId: o.fileId, fileSize: num(o.fileSize), width: num(o.width), height: num(o.height), mimeType: str(o.mimeType), fileName: str(o.fileName) };
}
