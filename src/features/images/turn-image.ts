/**
 * Fetches a message's image for its turn and makes it request content: download by file id
 * (again after a restart: the journal holds the id, never the bytes), check what the bytes are,
 * price it, and refuse one that would take more than `maxTokens` of the context. Any failure is an outcome with a reason in words, for the line the user gets.
 */
import { imagePart, type ImageCost, type ImageDetail } from '../../llm/vision.js';
import { MAX_IMAGE_BYTES, type FileFetcher } from '../../media/attachments.js';
import type { ImageRef } from '../../core/message.js';
import { readImageInfo } from '../../media/image-info.js';
import type { TurnImage } from '../../turn/turn.js';

export type ImageLoad = { ok: true; image: TurnImage } | { ok: false; why: string; detail: string };

export async function loadTurnImage(
  deps: { fetch: FileFetcher | undefined; cost: ImageCost | null; detail?: ImageDetail; maxBytes?: number; maxTokens?: number },
  ref: ImageRef,
): Promise<ImageLoad> {
  if (!deps.cost) return { ok: false, why: 'the model I use reads text only', detail: 'model without vision' };
  if (!deps.fetch) return { ok: false, why: 'this channel cannot download files', detail: 'no fetcher for the channel' };
  const max = deps.maxBytes ?? MAX_IMAGE_BYTES;
  const file = await deps.fetch(ref.fileId, max);
  if (!file.ok) {
    return file.reason === 'too_big'
      ? { ok: false, why: `it is larger than ${Math.round(max / 1024 / 1024)} MB`, detail: file.detail }
      : { ok: false, why: 'it could not be downloaded', detail: file.detail };
  }
  const info = readImageInfo(file.bytes);
  if (!info) return { ok: false, why: 'it is not a JPEG, PNG, GIF or WebP image', detail: `unrecognised bytes (${file.bytes.length})` };
  const { part, tokens } = imagePart(file.bytes, info, deps.cost, deps.detail);
  if (deps.maxTokens !== undefined && tokens > deps.maxTokens) {
    const n = (x: number) => x.toLocaleString('en-US');
    return {
      ok: false,
      why: `it would take ~${n(tokens)} tokens, more than the ${n(deps.maxTokens)} this chat's context leaves for an image`,
      detail: `${info.width}×${info.height}: ${tokens} tokens`,
    };
  }
  return { ok: true, image: { part, tokens, info, bytes: file.bytes.length } };
}
