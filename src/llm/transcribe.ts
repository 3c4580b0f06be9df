/**
 * Speech to text through the OpenAI SDK's audio transcription endpoint (`/audio/transcriptions`),
 * so any OpenAI-compatible server that offers it works (TRANSCRIPTION_MODEL, default whisper-1).
 * One attempt: a voice note that fails to transcribe is kept by the caller, never lost, and the
 * user is told at once rather than after a minute of retries.
 */
import OpenAI, { toFile } from 'openai';

export interface TranscriptionFailure {
  /** `refused`: the server answered with an error (no such endpoint or model, bad audio); `unreachable`: no answer. */
  kind: 'refused' | 'unreachable';
  status?: number | undefined;
  message: string;
}

export type TranscriptionResult = { ok: true; text: string } | { ok: false; failure: TranscriptionFailure };

export class Transcriber {
  constructor(
    private readonly sdk: OpenAI,
    readonly model: string,
    private readonly timeoutMs = 120_000,
  ) {}

  async transcribe(audio: Buffer, filename: string, mimeType?: string): Promise<TranscriptionResult> {
    try {
      const file = await toFile(audio, filename, mimeType ? { type: mimeType } : undefined);
      const res = await this.sdk.audio.transcriptions.create({ file, model: this.model }, { timeout: this.timeoutMs, maxRetries: 0 });
      const text = typeof res.text === 'string' ? res.text.trim() : '';
      if (!text) return { ok: false, failure: { kind: 'refused', message: 'the transcript was empty' } };
      return { ok: true, text };
    } catch (err) {
      if (err instanceof OpenAI.APIError && err.status !== undefined) {
        return { ok: false, failure: { kind: 'refused', status: err.status, message: err.message } };
      }
      return { ok: false, failure: { kind: 'unreachable', message: (err as Error).message } };
    }
  }
}
