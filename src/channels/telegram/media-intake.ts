/**
 * Media on the way in, before a message is handed to the app. An image: what is clear without
 * its bytes is decided here (the download happens in the turn, systems/images.ts). A voice
 * note or audio file: transcribed now, before the update counts as taken, so a kill meanwhile
 * means Telegram sends it again. What cannot go to the model is kept in its session (keep.ts)
 * and answered with one line instead of a turn.
 */
import type { Telegram } from 'telegraf';
import type { Logger } from '../../core/log.js';
import type { Transcriber } from '../../llm/transcribe.js';
import type { InboundMessage } from '../../core/message.js';
import type { KeepFn } from '../keep.js';
import type { Delivery, SendOptions } from './delivery.js';
import type { Inbound } from './inbound.js';
import { untranscribedText, voiceText } from './media.js';
import { albumItemText, imageMessage } from './photos.js';
import { transcribeNote } from './voice.js';

export interface MediaIntakeDeps {
  telegram: Telegram;
  delivery: Delivery;
  log: Logger;
  keep?: KeepFn | undefined;
  transcriber?: Transcriber | undefined;
  /** The model reads images. */
  vision: boolean;
  /** Echo a transcript to the chat before the answer (SHOW_TRANSCRIPT). */
  showTranscript: boolean;
}

/** Fills in `msg` for an image or audio update; returns the line to send instead of a turn, if any. */
export async function prepareMedia(r: Inbound, msg: InboundMessage, chatId: string, send: SendOptions, deps: MediaIntakeDeps): Promise<string | undefined> {
  if (r.kind === 'image' && r.albumId) {
    // One of an album: what cannot be read is said once for the whole album, in its turn
    // (systems/images.ts), so nothing is refused or kept here, item by item.
    msg.text = albumItemText(r);
    msg.image = r.image;
    msg.albumId = r.albumId;
    return undefined;
  }
  if (r.kind === 'image') {
    const image = imageMessage(r, deps.vision);
    msg.text = image.text;
    msg.image = r.image;
    if (!image.refusal) return undefined;
    await deps.keep?.(msg).catch((err: unknown) => deps.log.error({ err, chatId }, 'an image could not be kept'));
    return image.refusal;
  }
  if (r.kind !== 'audio') return undefined;
  void deps.delivery.chatAction(chatId, 'typing', send.threadId);
  const voice = await transcribeNote({ telegram: deps.telegram, transcriber: deps.transcriber, log: deps.log }, r.audio);
  if (!voice.ok) {
    await deps.keep?.({ ...msg, text: untranscribedText(r.audio, r.caption) }).catch((err: unknown) => deps.log.error({ err, chatId }, 'an untranscribed voice message could not be kept'));
    return voice.userLine;
  }
  msg.text = voiceText(voice.transcript, r.caption);
  if (deps.showTranscript) {
    await deps.delivery.sendPlain(chatId, `🎤 ${voice.transcript}`, send).catch((err: unknown) => deps.log.warn({ err, chatId }, 'transcript could not be shown'));
  }
  return undefined;
}
