/**
 * What arrives from a channel is cleaned before anything stores it: NUL and other control
 * characters (except tab and newline) are removed, lone UTF-16 surrogates become U+FFFD, and a
 * message over MAX_MESSAGE_CHARS is cut with a note the model and the user both see.
 */
export interface CleanedText {
  text: string;
  /** Characters cut off the end (0 when the message was short enough). */
  truncated: number;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

/** The text without control characters (tab and newline kept, CR LF made LF) and lone surrogates. */
export function stripControl(raw: string): string {
  return raw.toWellFormed().replace(/\r\n?/g, '\n').replace(CONTROL, '');
}

export function cleanInboundText(raw: string, maxChars: number): CleanedText {
  let text = stripControl(raw);
  let truncated = 0;
  if (text.length > maxChars) {
    // Cut on a code point boundary, never inside a surrogate pair.
    let cut = maxChars;
    if (/[\uD800-\uDBFF]/.test(text[cut - 1] ?? '')) cut--;
    truncated = text.length - cut;
    text = `${text.slice(0, cut)}\n[… message truncated: the last ${truncated.toLocaleString('en-US')} characters were not read]`;
  }
  return { text, truncated };
}
