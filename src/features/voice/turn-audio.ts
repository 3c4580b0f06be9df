/**
 * A turn's voice note to text: download by file id (again after a restart: the journal holds
 * the id, never the bytes), then speech to text through the LLM client (its cost recorded in
 * usage.db). Both run under one deadline of their own (TRANSCRIPTION_TIMEOUT_MS), inside the
 * turn's: a stuck download or a server that never answers ends in a line to the user, not in
 * the turn's apology. Any failure is an outcome with a reason in words and a stable code.
 */
import type { AudioRef } from '../../core/message.js';
import type { ErrorCode } from '../../core/errors.js';
import { MAX_IMAGE_BYTES, type FileFetcher } from '../../media/attachments.js';
import { audioNoun } from '../../media/audio.js';
import type { TranscriptionRequest, TranscriptionResult } from '../../llm/transcribe.js';

export interface HearDeps {
  fetch: FileFetcher | undefined;
  /** LlmClient.transcribe, billed to the chat. */
  transcribe: (req: TranscriptionRequest) => Promise<TranscriptionResult>;
  /** TRANSCRIPTION_MODEL; undefined: off. */
  model: string | undefined;
  timeoutMs: number;
  /** The turn's deadline: its abort is not this step's failure (the turn is being stopped). */
  signal: AbortSignal;
  maxBytes?: number;
}

export type Heard = { ok: true; transcript: string } | { ok: false; code: ErrorCode | undefined; userLine: string; detail: string };

const EXT: Record<string, string> = {
  'audio/ogg': 'ogg',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/x-m4a': 'm4a',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/webm': 'webm',
  'audio/flac': 'flac',
};

export async function hearNote(deps: HearDeps, audio: AudioRef): Promise<Heard> {
  const what = audioNoun(audio);
  const saved = 'It is saved in our conversation; please type what you said if you need an answer now.';
  const max = deps.maxBytes ?? MAX_IMAGE_BYTES;
  const tooBig = `Your ${what} is larger than ${Math.round(max / 1024 / 1024)} MB, the most a bot can download from Telegram. Please send a shorter one or type it.`;
  if (!deps.model)
    return {
      ok: false,
      code: undefined,
      userLine: `I can't transcribe ${what}s here (no speech-to-text is set up). ${saved}`,
      detail: 'TRANSCRIPTION_MODEL=off',
    };
  if (!deps.fetch) return { ok: false, code: undefined, userLine: `I can't fetch ${what}s on this channel. ${saved}`, detail: 'no fetcher for the channel' };
  if (audio.fileSize !== undefined && audio.fileSize > max)
    return { ok: false, code: undefined, userLine: tooBig, detail: `announced ${audio.fileSize} bytes` };

  const deadline = AbortSignal.timeout(deps.timeoutMs);
  const signal = AbortSignal.any([deadline, deps.signal]);
  const late = new Promise<'late'>((resolve) => signal.addEventListener('abort', () => resolve('late'), { once: true }));
  const work = (async (): Promise<Heard> => {
    const file = await deps.fetch!(audio.fileId, max, signal);
    if (!file.ok) {
      return file.reason === 'too_big'
        ? { ok: false, code: undefined, userLine: tooBig, detail: file.detail }
        : { ok: false, code: 'transcription.failed', userLine: `I couldn't download your ${what} from Telegram. ${saved}`, detail: `download: ${file.detail}` };
    }
    // Whisper-style servers recognise the format by the file name's extension.
    const ext = /\.([A-Za-z0-9]{1,5})$/.exec(audio.fileName ?? file.filePath)?.[1] ?? EXT[audio.mimeType ?? ''] ?? 'ogg';
    const r = await deps.transcribe({
      audio: file.bytes,
      filename: `${audio.kind}.${ext === 'oga' ? 'ogg' : ext}`,
      mimeType: audio.mimeType,
      model: deps.model!,
      timeoutMs: deps.timeoutMs,
      signal,
      seconds: audio.duration,
    });
    if (r.ok) return { ok: true, transcript: r.text };
    const why = r.failure.kind === 'unreachable' ? 'the speech-to-text service did not answer' : 'the speech-to-text service refused it';
    return {
      ok: false,
      code: 'transcription.failed',
      userLine: `I couldn't transcribe your ${what} (${why}). ${saved}`,
      detail: `${r.failure.kind}${r.failure.status ? ` ${r.failure.status}` : ''}: ${r.failure.message}`,
    };
  })();
  work.catch(() => undefined); // once late, its end is not waited for
  const outcome = await Promise.race([work, late]);
  if (outcome !== 'late' && !(signal.aborted && !outcome.ok)) return outcome;
  // The turn's own deadline: the turn is stopped and apologises; this is not a transcription failure.
  if (deps.signal.aborted) throw deps.signal.reason;
  const s = Math.round(deps.timeoutMs / 1000);
  return {
    ok: false,
    code: 'transcription.timeout',
    userLine: `I couldn't transcribe your ${what} within ${s} second${s === 1 ? '' : 's'}. ${saved}`,
    detail: `over TRANSCRIPTION_TIMEOUT_MS (${deps.timeoutMs} ms)`,
  };
}
