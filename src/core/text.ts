// Text helpers that stay linear on any input. A backtracking regex such as /\s*\n\s*/g or
// /\s+$/ retries from every position of a long run of spaces: a 200,000-character reply of
// spaces froze the one event loop for minutes. These scan each character a bounded number of
// times instead.

/** Every run of whitespace that contains a line break becomes one space (what the regex above did). */
export function collapseLineBreaks(text: string): string {
  if (!text.includes('\n')) return text;
  const parts = text.split('\n');
  const out: string[] = [parts[0]!.trimEnd()];
  for (let i = 1; i < parts.length - 1; i++) {
    // A line of only whitespace between two breaks belongs to the same run.
    const middle = parts[i]!.trim();
    if (middle !== '') out.push(middle);
  }
  out.push(parts.at(-1)!.trimStart());
  return out.join(' ');
}

/** `text` up to `max` characters, never half a surrogate pair; `…` ends it when it was cut. */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--;
  return `${text.slice(0, end)}…`;
}
