/**
 * An album's images for its one turn: each is loaded like a single image (turn-image.ts), and
 * together they share the part of the context one image may take — an album of ten must not
 * crowd out the conversation ten times over. What could not be loaded is said in one line for
 * the whole album (which pictures, and why), never one line per picture.
 */
import type { FileFetcher } from '../../media/attachments.js';
import type { ImageRef } from '../../core/message.js';
import type { ImageCost, ImageDetail } from '../../llm/vision.js';
import { loadTurnImage } from './turn-image.js';
import type { TurnImage } from '../../turn/turn.js';
import { announcedReadable } from '../../media/image-info.js';

export interface AlbumLoad {
  loaded: TurnImage[];
  /** The pictures not seen: their place in the album (1-based) and why. */
  missed: Array<{ index: number; ref: ImageRef; why: string; detail: string }>;
}

/** Loads the album's images in order; `maxTokens` is for all of them together. */
export async function loadAlbumImages(
  deps: { fetch: FileFetcher | undefined; cost: ImageCost | null; detail?: ImageDetail; maxTokens?: number },
  refs: ImageRef[],
): Promise<AlbumLoad> {
  const out: AlbumLoad = { loaded: [], missed: [] };
  let left = deps.maxTokens;
  for (const [i, ref] of refs.entries()) {
    // A type the model cannot read (HEIC…) is not downloaded just to find that out.
    if (ref.kind === 'document' && !announcedReadable(ref.mimeType)) {
      out.missed.push({ index: i + 1, ref, why: `it is ${ref.mimeType}, and I can read JPEG, PNG, GIF and WebP`, detail: `announced ${ref.mimeType}` });
      continue;
    }
    // One after another: downloads stay gentle on Telegram, and the budget left is known for each.
    const load = await loadTurnImage(
      { fetch: deps.fetch, cost: deps.cost, ...(deps.detail ? { detail: deps.detail } : {}), ...(left !== undefined ? { maxTokens: left } : {}) },
      ref,
    );
    if (load.ok) {
      out.loaded.push(load.image);
      if (left !== undefined) left -= load.image.tokens;
    } else {
      out.missed.push({ index: i + 1, ref, why: load.why, detail: load.detail });
    }
  }
  return out;
}

/** "3 photos", "2 images", "a photo and an image": what the album holds, in words. */
export function albumNoun(refs: ImageRef[]): string {
  const photos = refs.filter((r) => r.kind === 'photo').length;
  const files = refs.length - photos;
  const count = (n: number, one: string) => (n === 1 ? `1 ${one}` : `${n} ${one}s`);
  if (files === 0) return count(photos, 'photo');
  if (photos === 0) return count(files, 'image');
  return `${count(photos, 'photo')} and ${count(files, 'image')}`;
}

/**
 * The pictures not seen, for the reply: "picture 2 of 3 (it could not be downloaded)", or
 * several joined; the same reason is said once for all the pictures it applies to.
 */
export function missedText(missed: AlbumLoad['missed'], total: number): string {
  const byWhy = new Map<string, number[]>();
  for (const m of missed) byWhy.set(m.why, [...(byWhy.get(m.why) ?? []), m.index]);
  const parts = [...byWhy].map(([why, idx]) => {
    const which = idx.length === 1 ? `picture ${idx[0]}` : `pictures ${idx.slice(0, -1).join(', ')} and ${idx.at(-1)}`;
    return `${which} of ${total} (${why})`;
  });
  return parts.join('; ');
}
