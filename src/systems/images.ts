/**
 * Images (15) — reads: `turn.inbound.image` (a file id; the message's text is its placeholder
 * and caption). Writes: `turn.image`, the image as request content, which ToolLoop (30) sends
 * with the user's message of this turn only; nothing of it is stored. It runs first: an image
 * that cannot be loaded and came without words ends the turn with one line before compaction
 * or memory search spend anything on it. With words, the turn goes on and the reply says the
 * image was not seen.
 */
import { ORDER } from '../pipeline/order.js';
import type { System } from '../pipeline/system.js';
import { endTurn, type Turn } from '../pipeline/turn.js';
import { componentLogger } from '../log.js';
import type { ImageCost, ImageDetail } from '../llm/vision.js';
import { imagePlaceholder, readImageRef, type MediaFetchers } from '../media/attachments.js';
import { loadTurnImage } from '../media/turn-image.js';

export interface ImagesDeps {
  fetchers: MediaFetchers;
  /** The model's image cost; null when it reads text only. */
  vision: ImageCost | null;
  detail?: ImageDetail;
  /** The context limit (services.ts): an image may take at most half of it, the rest is the conversation's. */
  contextLimit?: () => number;
}

function hasImage(turn: Turn): boolean {
  return turn.inbound.image !== undefined;
}

export function createImagesSystem(deps: ImagesDeps): System {
  return {
    name: 'Images',
    order: ORDER.Images,
    onFailure: 'fail-turn',
    shouldRun: hasImage,
    async run(turn) {
      const log = componentLogger(turn.log, 'Images');
      const ref = readImageRef(turn.inbound.image);
      if (!ref) return;
      const load = await loadTurnImage(
        {
          fetch: deps.fetchers.get(turn.inbound.channel),
          cost: deps.vision,
          ...(deps.detail ? { detail: deps.detail } : {}),
          ...(deps.contextLimit ? { maxTokens: Math.floor(deps.contextLimit() / 2) } : {}),
        },
        ref,
      );
      if (load.ok) {
        turn.image = load.image;
        const { info, tokens, bytes } = load.image;
        log.info({ fileId: ref.fileId, mime: info.mime, width: info.width, height: info.height, bytes, tokens }, `image attached (${info.width}×${info.height}, ~${tokens} tokens)`);
        return;
      }
      log.warn({ fileId: ref.fileId, detail: load.detail }, `image not shown to the model: ${load.why}`);
      const what = ref.kind === 'photo' ? 'photo' : 'image';
      // The placeholder alone: no caption, no quote, nothing for the model to answer.
      if (turn.inbound.text.trim() !== imagePlaceholder(ref, undefined)) {
        turn.notices.push(`I couldn't look at your ${what} (${load.why}), so I answered from your words only.`);
        return;
      }
      await turn.reply(`I couldn't look at your ${what} (${load.why}). It is saved in our conversation; please send it again if you need an answer about it.`);
      turn.delivered = true;
      endTurn(turn, 'Images', `image not loaded: ${load.detail}`);
    },
  };
}
