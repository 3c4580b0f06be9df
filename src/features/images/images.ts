/**
 * Images (15) — reads: `turn.inbound.image` (a file id; the message's text is its placeholder
 * and caption), or `turn.inbound.images` (an album collected into one message). Writes:
 * `turn.images`, the images as request content, which ToolLoop (30) sends with the user's
 * message of this turn only; nothing of them is stored. An image the model cannot take, as far
 * as its announced size and type or the model tell (media/attachments.ts, imageRefusal), is
 * answered with one line before any download, and the user message's text is revised to say
 * it was not shown (with the file id). It runs before the rest: images that cannot be
 * loaded and came without words end the turn with one line before compaction or memory search
 * spend anything on them. With words (or, in an album, with some pictures seen), the turn goes
 * on and the reply says what was not seen — once for the whole album.
 */
import { ORDER } from '../../turn/order.js';
import type { System } from '../../turn/system.js';
import { endTurn, type Turn } from '../../turn/turn.js';
import { componentLogger } from '../../core/log.js';
import type { ImageCost, ImageDetail } from '../../llm/vision.js';
import { imagePlaceholder, imageRefusal, readImageRef, withImageNote, type FileFetcher, type MediaFetchers } from '../../media/attachments.js';
import type { ImageRef } from '../../core/message.js';
import { loadTurnImage } from './turn-image.js';
import { albumNoun, loadAlbumImages, missedText } from './album-images.js';
import type { Logger } from '../../core/log.js';

export interface ImagesDeps {
  fetchers: MediaFetchers;
  detail?: ImageDetail;
}

function hasImage(turn: Turn): boolean {
  return turn.inbound.image !== undefined || (turn.inbound.images?.length ?? 0) > 0;
}

export function createImagesSystem(deps: ImagesDeps): System {
  return {
    name: 'Images',
    order: ORDER.Images,
    onFailure: 'fail-turn',
    shouldRun: hasImage,
    async run(turn) {
      const log = componentLogger(turn.log, 'Images');
      const album = (turn.inbound.images ?? []).flatMap((r) => readImageRef(r) ?? []);
      if (album.length > 0) return runAlbum(turn, deps, album, log);
      const ref = readImageRef(turn.inbound.image);
      if (!ref) return;
      // What is clear without the bytes (a text-only model, over 20 MB, HEIC…): one line, no
      // download, no request; the session's text says the model never saw it, with the file id.
      const refusal = imageRefusal(ref, turn.model.info.vision !== null);
      if (refusal) {
        await turn.writes.revise(turn.userMessage, withImageNote(turn.inbound.text, ref, `not shown to the model; Telegram file_id: ${ref.fileId}`));
        log.info({ fileId: ref.fileId }, 'image not shown to the model (decided before any download)');
        await turn.writes.commit();
        await turn.reply(refusal);
        turn.delivered = true;
        endTurn(turn, 'Images', 'image refused up front');
        return;
      }
      const load = await loadTurnImage(loadOptions(turn, deps), ref);
      if (load.ok) {
        turn.images = [load.image];
        const { info, tokens, bytes } = load.image;
        log.info(
          { fileId: ref.fileId, mime: info.mime, width: info.width, height: info.height, bytes, tokens },
          `image attached (${info.width}×${info.height}, ~${tokens} tokens)`,
        );
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

/**
 * How this turn's images are loaded: from its channel, at the cost of the chat's model (null: it
 * reads text only), and together within half its context limit (one picture or a whole album:
 * the conversation keeps the other half).
 */
function loadOptions(turn: Turn, deps: ImagesDeps): { fetch: FileFetcher | undefined; cost: ImageCost | null; detail?: ImageDetail; maxTokens?: number } {
  return {
    fetch: deps.fetchers.get(turn.inbound.channel),
    cost: turn.model.info.vision,
    ...(deps.detail ? { detail: deps.detail } : {}),
    maxTokens: Math.floor(turn.model.limit / 2),
  };
}

/** An album's turn: every picture it can, one line about the rest. */
async function runAlbum(turn: Turn, deps: ImagesDeps, refs: ImageRef[], log: Logger): Promise<void> {
  const noun = albumNoun(refs);
  if (!turn.model.info.vision) {
    // As for a single photo: the model is not asked; the session keeps the album's file ids.
    await turn.reply(
      `The model I use reads text only, so I can't look at your ${noun}. They are saved in our conversation; describe them in words if you need an answer now.`,
    );
    turn.delivered = true;
    endTurn(turn, 'Images', 'album for a text-only model');
    return;
  }
  const load = await loadAlbumImages(loadOptions(turn, deps), refs);
  turn.images = load.loaded;
  const tokens = load.loaded.reduce((sum, i) => sum + i.tokens, 0);
  log.info({ images: refs.length, attached: load.loaded.length, tokens }, `album: ${load.loaded.length} of ${refs.length} images attached (~${tokens} tokens)`);
  if (load.missed.length === 0) return;
  for (const m of load.missed) log.warn({ fileId: m.ref.fileId, index: m.index, detail: m.detail }, `album image not shown to the model: ${m.why}`);
  if (load.loaded.length > 0) {
    turn.notices.push(`I couldn't look at ${missedText(load.missed, refs.length)}, so I answered from the other pictures.`);
    return;
  }
  const why = [...new Set(load.missed.map((m) => m.why))].join('; ');
  // Only placeholders, no caption or quote: nothing for the model to answer.
  const bare = refs.map((r) => imagePlaceholder(r, undefined)).join('\n');
  if (turn.inbound.text.trim() !== bare) {
    turn.notices.push(`I couldn't look at your ${noun} (${why}), so I answered from your words only.`);
    return;
  }
  await turn.reply(`I couldn't look at your ${noun} (${why}). They are saved in our conversation; please send them again if you need an answer about them.`);
  turn.delivered = true;
  endTurn(turn, 'Images', `album not loaded: ${load.missed.map((m) => m.detail).join('; ')}`);
}
