/**
 * Voice notes and audio files as the rest of the daemon sees them: a reference (the channel's
 * file id and what the channel said about it), never the bytes. The reference travels in the
 * inbound message, so the inbox journal holds it and a turn recovered after a restart downloads
 * the note again; the session keeps it beside the text. The message text starts as the note's
 * placeholder — what the session keeps when there is no transcript — and becomes
 * `[Voice message, transcribed] …` once the turn has one (features/voice/transcription.ts).
 */
import type { AudioRef } from '../core/message.js';

/** "voice message" or "audio file": how the user is told about it. */
export function audioNoun(a: Pick<AudioRef, 'kind'>): string {
  return a.kind === 'voice' ? 'voice message' : 'audio file';
}

/** The note before (or without) a transcript: where it came from and its file id, so it can be found again. */
export function audioPlaceholder(a: AudioRef, caption?: string): string {
  const len = a.duration !== undefined ? `, ${a.duration} s` : '';
  return `[${a.kind === 'voice' ? 'Voice message' : 'Audio file'}${len}, not transcribed; Telegram file_id: ${a.fileId}]${caption ? `\n\n${caption}` : ''}`;
}

/** The caption that came with the note: what follows its placeholder in the message text. */
export function audioCaption(a: AudioRef, text: string): string | undefined {
  const head = audioPlaceholder(a);
  return text.startsWith(head) ? text.slice(head.length).trim() || undefined : undefined;
}

/** How a transcribed note is stored: the model and anyone reading the session see where it came from. */
export function voiceText(transcript: string, caption?: string): string {
  return `[Voice message, transcribed] ${transcript}${caption ? `\n\n${caption}` : ''}`;
}

/** An inbound message's audio reference as read back from the journal, or undefined when unusable. */
export function readAudioRef(v: unknown): AudioRef | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if ((o.kind !== 'voice' && o.kind !== 'audio') || typeof o.fileId !== 'string' || o.fileId === '') return undefined;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : undefined);
  const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
  return { kind: o.kind, fileId: o.fileId, fileSize: num(o.fileSize), duration: num(o.duration), mimeType: str(o.mimeType), fileName: str(o.fileName) };
}
