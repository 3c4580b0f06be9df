/**
 * Files on Telegram: a message's voice note or audio file, found and described (the turn
 * transcribes it: features/voice/transcription.ts), and the one downloader for any file id — getFile,
 * then the bytes, at most 20 MB (the Bot API's limit for bots). The app's turns fetch images and
 * notes through it (registered with MediaFetchers by the channel).
 */
import type { Telegram } from 'telegraf';
import type { Message } from 'telegraf/types';
import { MAX_IMAGE_BYTES, type Download } from '../../media/attachments.js';
import type { AudioRef } from '../../core/message.js';

export type { Download } from '../../media/attachments.js';

/** The Bot API's download limit for bots. */
export const MAX_DOWNLOAD_BYTES = MAX_IMAGE_BYTES;

/** The voice note or audio file of a message (an audio *document* is left to the caption). */
export function audioOf(m: Message & Record<string, any>): AudioRef | undefined {
  const kind = m.voice ? 'voice' : m.audio ? 'audio' : undefined;
  const f = kind ? m[kind] : undefined;
  if (!kind || !f || typeof f.file_id !== 'string') return undefined;
  return {
    kind,
    fileId: f.file_id,
    fileSize: typeof f.file_size === 'number' ? f.file_size : undefined,
    duration: typeof f.duration === 'number' ? f.duration : undefined,
    mimeType: typeof f.mime_type === 'string' ? f.mime_type : undefined,
    fileName: typeof f.file_name === 'string' ? f.file_name : undefined,
  };
}

/**
 * getFile, then the file itself, refusing anything over the limit (before and while reading:
 * the size Telegram announces is not trusted). Only http(s) links: a local Bot API server's
 * absolute paths would be a file read outside the workspace.
 */
export async function downloadFile(
  telegram: Telegram,
  fileId: string,
  maxBytes = MAX_DOWNLOAD_BYTES,
  timeoutMs = 60_000,
  signal?: AbortSignal,
): Promise<Download> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const stop = () => ac.abort();
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted) ac.abort();
  try {
    const file = await telegram.getFile(fileId);
    if (typeof file.file_size === 'number' && file.file_size > maxBytes) return { ok: false, reason: 'too_big', detail: `${file.file_size} bytes` };
    if (!file.file_path) return { ok: false, reason: 'failed', detail: 'getFile gave no file_path' };
    const link = await telegram.getFileLink(file);
    if (link.protocol !== 'https:' && link.protocol !== 'http:') return { ok: false, reason: 'failed', detail: `unsupported link ${link.protocol}` };
    const res = await fetch(link, { signal: ac.signal });
    if (!res.ok || !res.body) return { ok: false, reason: 'failed', detail: `download answered ${res.status}` };
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > maxBytes) {
        ac.abort();
        return { ok: false, reason: 'too_big', detail: `over ${maxBytes} bytes` };
      }
      chunks.push(Buffer.from(chunk));
    }
    return { ok: true, bytes: Buffer.concat(chunks), filePath: file.file_path };
  } catch (err) {
    // The token is part of the download URL: only the error's kind goes to the log.
    return { ok: false, reason: 'failed', detail: (err as Error).name === 'AbortError' ? 'timed out' : describe(err) };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  }
}

function describe(err: unknown): string {
  const e = err as { response?: { error_code?: number; description?: string }; code?: string; name?: string };
  if (e.response?.error_code) return `getFile ${e.response.error_code} ${e.response.description ?? ''}`.trim();
  return e.code ?? e.name ?? 'error';
}
