/**
 * What a forget's user reads (privacy/forget.ts): the counts of what went, and the notice a chat
 * gets when a start finished the /forget a kill cut short — which never repeats the words.
 */
/** What a forget finds and removes, by kind. */
export interface ForgetCounts {
  memoryEntries: number;
  facts: number;
  /** Indexed messages (episodes) and weekly insights. */
  indexedMessages: number;
  noteLines: number;
  historyLines: number;
  sessionMessages: number;
  /** Pending reminders whose text holds the words (schedules.db). */
  reminders: number;
  /** Memory writes held for the owner's approval (memory/pending.ts); absent in records of before they were kept. */
  pendingWrites?: number | undefined;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** What the chat is told of a forget a start finished (or gave up on): never the words. */
export function forgetNotice(record: { outcome?: 'finished' | 'given-up' | undefined; counts: ForgetCounts; indexOff?: string | undefined }): string {
  if (record.outcome === 'given-up') {
    return '⚠️ Your /forget confirm was cut off by a restart of the bot twice, so I stopped: what you asked to forget may still be kept. Send /forget <words> again, then /forget confirm.';
  }
  const removed = describeCounts(record.counts);
  return [
    `🗑 The bot restarted while it was forgetting what you asked with /forget confirm; that is finished now.${removed ? ` Removed: ${removed}.` : ''}`,
    record.indexOff ? `The search index could not be cleaned (${record.indexOff}); send /forget <words> again once it works.` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/** "1 MEMORY.md entry, 2 facts, …" — the non-zero counts, for the replies. */
export function describeCounts(c: ForgetCounts): string {
  const parts = [
    c.memoryEntries && plural(c.memoryEntries, 'MEMORY.md entry', 'MEMORY.md entries'),
    c.facts && plural(c.facts, 'fact'),
    c.indexedMessages && plural(c.indexedMessages, 'indexed message'),
    c.noteLines && plural(c.noteLines, 'daily-note line'),
    c.historyLines && plural(c.historyLines, 'history line'),
    c.sessionMessages && plural(c.sessionMessages, 'message in this conversation', 'messages in this conversation'),
    c.reminders && plural(c.reminders, 'pending reminder'),
    c.pendingWrites && plural(c.pendingWrites, 'memory change held for approval', 'memory changes held for approval'),
  ].filter(Boolean) as string[];
  return parts.join(', ');
}
