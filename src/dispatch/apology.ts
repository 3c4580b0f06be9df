/** What the user is told when handling their message went wrong: one or two lines, with what to do next. */

/** The reply to a message whose handling failed; `code` is the error's stable code, when it has one. */
export function apologyText(errorId: string, code: string | undefined): string {
  const hint = code?.startsWith('llm.')
    ? code === 'llm.context_length_exceeded'
      ? 'The conversation is too long for the model. Send /compact or /new, then try again.'
      : 'The language model is not answering right now. Please try again in a minute.'
    : 'Please try again; if it keeps happening, tell the bot owner.';
  return `Sorry, something went wrong while answering (error id ${errorId}). ${hint}`;
}

/** "1 second", "90 seconds", "2 minutes". */
function spoken(ms: number): string {
  const s = Math.round(ms / 1000);
  const [n, unit] = s >= 120 && s % 60 === 0 ? [s / 60, 'minute'] : [s, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** The one reply to a turn stopped at TURN_TIMEOUT_MS. */
export function deadlineText(errorId: string, timeoutMs: number): string {
  return `Sorry, I could not answer within ${spoken(timeoutMs)}, so I stopped (error id ${errorId}). Your message is saved; please send it again in a moment, perhaps shorter.`;
}
