/**
 * What a channel shows while an answer is being written (Telegram: a draft or an edited
 * placeholder). Cosmetic: calls return at once and never fail; the answer itself still goes
 * through the way back (`Reply`, channel.ts), whose text ends the preview.
 */
export interface AnswerProgress {
  /** The answer's text so far (the whole of it, not the delta); may start again shorter after a retry. */
  text(soFar: string): void;
  /** A short line while tools run ("searching memory…"). */
  status(line: string): void;
  /**
   * The answer will not come (/stop before any text): whatever the preview shows gives way to
   * `line` (a placeholder is edited to it); nothing is sent when nothing was shown.
   */
  end?(line: string): Promise<void>;
  /**
   * The answer is another process's now (a chat lost to it, docs/cluster.md): nothing more is
   * shown and nothing is changed — a draft simply stops, a placeholder stays as it is.
   */
  close?(): void;
}
