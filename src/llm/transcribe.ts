/**
 * Speech to text through the OpenAI SDK's audio transcription endpoint (`/audio/transcriptions`),
 * so any OpenAI-compatible server that offers it works (TRANSCRIPTION_MODEL, default whisper-1).
 * Called through LlmClient.transcribe, which records what it cost in usage.db (kind
 * `transcription`). One attempt: a voice note that fails to transcribe is kept untranscribed,
 * never lost, and the user is told at once rather than after a minute of retries.
 *
 * What it cost: a token-billed model (gpt-4o-transcribe) reports `usage.type = "tokens"`, kept
 * as prompt (audio in) and completion (text out) tokens — they count towards
 * DAILY_TOKEN_BUDGET like any tokens; a duration-billed one (whisper-1) may report
 * `usage.type = "duration"`, kept as audio seconds. When the server reports nothing, the
 * seconds the channel announced for the note are kept, so the row still says what was sent.
 */
import OpenAI, { toFile } from 'openai';
import type { TokenUsage } from './accounting.js';

export interface TranscriptionFailure {
  /** `refused`: the server answered with an error (no such endpoint or model, bad audio); `unreachable`: no answer. */
  kind: 'refused' | 'unreachable';
  status?: number | undefined;
  message: string;
}

export type TranscriptionResult = { ok: true; text: string; usage: TokenUsage } | { ok: false; failure: TranscriptionFailure };

export interface TranscriptionRequest {
  audio: Buffer;
  /** Whisper-style servers recognise the format by the file name's extension. */
  filename: string;
  mimeType?: string | undefined;
  model: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** The note's length as the channel announced it: the usage kept when the server reports none. */
  seconds?: number | undefined;
}

/** What the server's `usage` says the call cost, in our terms. */
function usageOf(res: { usage?: unknown }, announcedSeconds: number | undefined): TokenUsage {
  const u = res.usage as { type?: string; input_tokens?: number; output_tokens?: number; seconds?: number } | undefined;
  if (u?.type === 'tokens') return { promptTokens: u.input_tokens ?? 0, cachedTokens: 0, completionTokens: u.output_tokens ?? 0 };
  const seconds = u?.type === 'duration' && typeof u.seconds === 'number' ? u.seconds : announcedSeconds;
  return { promptTokens: 0, cachedTokens: 0, completionTokens: 0, audioSeconds: seconds ?? 0 };
}

export async function transcribeAudio(sdk: OpenAI, req: TranscriptionRequest): Promise<TranscriptionResult> {
  try {
    const file = await toFile(req.audio, req.filename, req.mimeType ? { type: req.mimeType } : undefined);
    const res = await sdk.audio.transcriptions.create({ file, model: req.model }, { timeout: req.timeoutMs, maxRetries: 0, signal: req.signal });
    const text = typeof res.text === 'string' ? res.text.trim() : '';
    if (!text) return { ok: false, failure: { kind: 'refused', message: 'the transcript was empty' } };
    return { ok: true, text, usage: usageOf(res, req.seconds) };
  } catch (err) {
    if (err instanceof OpenAI.APIError && err.status !== undefined) {
      return { ok: false, failure: { kind: 'refused', status: err.status, message: err.message } };
    }
    return { ok: false, failure: { kind: 'unreachable', message: (err as Error).message } };
  }
}
