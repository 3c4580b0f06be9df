/**
 * A voice note or audio file to text: download (≤ 20 MB) → transcribe. Either a transcript, or
 * the one line that tells the user what happened and what to do (the caller keeps the note).
 */
import type { Telegram } from 'telegraf';
import type { Logger } from '../../core/log.js';
import type { Transcriber } from '../../llm/transcribe.js';
import { downloadFile, MAX_DOWNLOAD_BYTES, type AudioRef } from './media.js';

export type VoiceOutcome = { ok: true; transcript: string } | { ok: false; userLine: string };

const EXT: Record<string, string> = { 'audio/ogg': 'ogg', 'audio/mpeg': 'mp3', 'audio/mp4': 'm4a', 'audio/x-m4a': 'm4a', 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/webm': 'webm', 'audio/flac': 'flac' };

export async function transcribeNote(deps: { telegram: Telegram; transcriber: Transcriber | undefined; log: Logger; maxBytes?: number }, audio: AudioRef): Promise<VoiceOutcome> {
  const what = audio.kind === 'voice' ? 'voice message' : 'audio file';
  const saved = `It is saved in our conversation; please type what you said if you need an answer now.`;
  if (!deps.transcriber) return { ok: false, userLine: `I can't transcribe ${what}s here (no speech-to-text is set up). ${saved}` };
  const max = deps.maxBytes ?? MAX_DOWNLOAD_BYTES;
  if (audio.fileSize !== undefined && audio.fileSize > max) return { ok: false, userLine: tooBig(what, max) };
  const file = await downloadFile(deps.telegram, audio.fileId, max);
  if (!file.ok) {
    deps.log.warn({ fileId: audio.fileId, reason: file.reason, detail: file.detail }, `${what} could not be downloaded`);
    return { ok: false, userLine: file.reason === 'too_big' ? tooBig(what, max) : `I couldn't download your ${what} from Telegram. ${saved}` };
  }
  // Whisper-style servers recognise the format by the file name's extension.
  const ext = /\.([A-Za-z0-9]{1,5})$/.exec(audio.fileName ?? file.filePath)?.[1] ?? EXT[audio.mimeType ?? ''] ?? 'ogg';
  const r = await deps.transcriber.transcribe(file.bytes, `${audio.kind}.${ext === 'oga' ? 'ogg' : ext}`, audio.mimeType);
  if (!r.ok) {
    deps.log.warn({ fileId: audio.fileId, model: deps.transcriber.model, ...r.failure }, `${what} could not be transcribed`);
    const why = r.failure.kind === 'unreachable' ? 'the speech-to-text service did not answer' : 'the speech-to-text service refused it';
    return { ok: false, userLine: `I couldn't transcribe your ${what} (${why}). ${saved}` };
  }
  return { ok: true, transcript: r.text };
}

function tooBig(what: string, max: number): string {
  return `Your ${what} is larger than ${Math.round(max / 1024 / 1024)} MB, the most a bot can download from Telegram. Please send a shorter one or type it.`;
}
