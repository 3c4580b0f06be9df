/**
 * Transcription (10) — reads: `turn.inbound.audio` (a voice note's file id; the user message
 * holds its untranscribed placeholder with the file id, then the caption). Writes: the user
 * message's text, through `turn.writes.revise`: `[Voice message, transcribed] …` and the caption.
 *
 * It runs first, in the chat's turn: by then the intake has journaled the note and applied the
 * limits every message meets (rate, queue, daily budget), so a refused note is never downloaded
 * or transcribed, and the update loop never waits for one (another chat's message is answered
 * meanwhile). Download and speech to text have their own deadline (TRANSCRIPTION_TIMEOUT_MS,
 * turn-audio.ts) inside the turn's. Without a transcript the turn ends with one line and
 * the session keeps the placeholder with the file id; nothing is asked of the model.
 * SHOW_TRANSCRIPT echoes what was heard (cut to 3,500 characters, control characters taken
 * out) through the turn's reply path, before the answer.
 */
import { ORDER } from '../../turn/order.js';
import type { System } from '../../turn/system.js';
import { endTurn, type Turn } from '../../turn/turn.js';
import { componentLogger } from '../../core/log.js';
import { audioCaption, readAudioRef, voiceText } from '../../media/audio.js';
import type { MediaFetchers } from '../../media/attachments.js';
import type { LlmClient } from '../../llm/client.js';
import { hearNote } from './turn-audio.js';
import { cleanInboundText, stripControl } from '../../turn/inbound.js';
import { cutChars } from '../../memory/notes.js';

/** The most of a transcript the SHOW_TRANSCRIPT echo shows (a Telegram message holds 4,096). */
export const ECHO_MAX_CHARS = 3500;

export interface TranscriptionDeps {
  fetchers: MediaFetchers;
  llm: Pick<LlmClient, 'transcribe'>;
  /** TRANSCRIPTION_MODEL; undefined: off. */
  model: string | undefined;
  timeoutMs: number;
  showTranscript: boolean;
  maxMessageChars: number;
}

/** The turn's note still waits for its transcript: the user message holds the placeholder (not after a restart that already had one). */
function untranscribedNote(turn: Turn): boolean {
  return turn.inbound.audio !== undefined && turn.userMessage.content === turn.inbound.text;
}

/** What the echo shows: one line's worth, nothing that drives a terminal or fakes a layout. */
export function echoText(transcript: string): string {
  const clean = stripControl(transcript);
  const cut = cutChars(clean, ECHO_MAX_CHARS);
  return `🎤 ${cut}${cut.length < clean.length ? '…' : ''}`;
}

export function createTranscriptionSystem(deps: TranscriptionDeps): System {
  return {
    name: 'Transcription',
    order: ORDER.Transcription,
    onFailure: 'fail-turn',
    shouldRun: untranscribedNote,
    async run(turn) {
      const log = componentLogger(turn.log, 'Transcription');
      const audio = readAudioRef(turn.inbound.audio);
      if (!audio) return;
      const heard = await hearNote(
        {
          fetch: deps.fetchers.get(turn.inbound.channel),
          transcribe: (req) => deps.llm.transcribe(turn.session.id, req),
          model: deps.model,
          timeoutMs: deps.timeoutMs,
          signal: turn.signal,
        },
        audio,
      );
      if (!heard.ok) {
        log.warn({ code: heard.code, fileId: audio.fileId, detail: heard.detail }, 'voice note not transcribed; kept with its file id, the user told');
        // "It is saved": on disk before the user reads it.
        await turn.writes.commit();
        await turn.reply(heard.userLine);
        turn.delivered = true;
        endTurn(turn, 'Transcription', `not transcribed: ${heard.detail}`);
        return;
      }
      // The transcript is the user's words: cleaned and cut like any message.
      const words = cleanInboundText(heard.transcript, deps.maxMessageChars).text;
      await turn.writes.revise(turn.userMessage, voiceText(words, audioCaption(audio, turn.inbound.text)));
      log.info({ fileId: audio.fileId, chars: words.length }, 'voice note transcribed');
      if (deps.showTranscript) await turn.aside(echoText(words)).catch((err: unknown) => log.warn({ err }, 'transcript could not be shown'));
    },
  };
}
