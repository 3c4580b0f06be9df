/**
 * The one writer of daily-note lines. Every line is derived from the session log, the one
 * durable record of a turn (sessions/wal.ts): an answered exchange (`[HH:mm] User: … |
 * Assistant: …`, at the time the user's message was received) and a delivered reminder
 * (`[HH:mm] Reminder (set by a user): …`). So a line is written without waiting for fsync, and
 * after a crash it is written again from the log unless the note already holds it (`ensure`):
 * every exchange once, none twice. `flush` makes the lines written so far durable, before the
 * session log may forget the lines they come from.
 */
import type { Logger } from '../core/log.js';
import { scrubSecrets } from '../core/log.js';
import type { SessionMessage } from '../sessions/model.js';
import { formatNoteLine, formatReminderLine, localDate } from './notes.js';
import type { MemoryService } from './service.js';
import type { MemoryFiles } from './files.js';

/** A line and the day's note it goes to. */
export interface NoteEntry {
  date: string;
  line: string;
}

/** Which chat's notes. */
export interface NoteChat {
  channel: string;
  chatId: string;
}

/**
 * The note line a logged assistant message stands for: a delivered reminder's, or an answer's
 * (an assistant message that is not a tool call, with the user's message it answers). None for
 * anything else (a tool round, a stopped answer, an answer without its question).
 */
export function noteEntryOf(answer: SessionMessage, user: SessionMessage | undefined, timezone: string): NoteEntry | undefined {
  if (answer.role !== 'assistant' || answer.stopped || (answer.toolCalls && answer.toolCalls.length > 0)) return undefined;
  if (answer.reminder) {
    const at = new Date(answer.timestamp);
    return { date: localDate(at, timezone), line: formatReminderLine(at, timezone, answer.content) };
  }
  if (user?.role !== 'user') return undefined;
  const at = new Date(user.timestamp);
  return { date: localDate(at, timezone), line: formatNoteLine(at, timezone, user.content, answer.content) };
}

export class DailyNotes {
  /** Notes written since the last flush, not yet durable: by scope and date, with the memory they are in. */
  private readonly dirty = new Map<string, { files: MemoryFiles; date: string }>();

  constructor(
    private readonly memory: MemoryService,
    private readonly timezone: string,
    private readonly log: Logger,
  ) {}

  /** The entry for `answer` (see noteEntryOf) in this daemon's time zone. */
  entryOf(answer: SessionMessage, user: SessionMessage | undefined): NoteEntry | undefined {
    return noteEntryOf(answer, user, this.timezone);
  }

  /** Appends the line (written, not fsynced: the session log holds what it derives from). */
  async append(chat: NoteChat, entry: NoteEntry): Promise<void> {
    const files = this.memory.forChat(chat.channel, chat.chatId);
    await files.appendNote(entry.date, entry.line, false);
    this.dirty.set(`${this.memory.scopeKey(chat.channel, chat.chatId)}/${entry.date}`, { files, date: entry.date });
  }

  /** Appends the line unless the day's note holds it already (recovery from the session log). True when written. */
  async ensure(chat: NoteChat, entry: NoteEntry): Promise<boolean> {
    const files = this.memory.forChat(chat.channel, chat.chatId);
    // The note as the prompt reads it: secrets scrubbed, as the line is when appended.
    const have = (await files.readNote(entry.date)).split('\n');
    if (have.includes(scrubSecrets(entry.line))) return false;
    await this.append(chat, entry);
    return true;
  }

  /** True while a line written is not yet fsynced: the session log must keep what it derives from. */
  get unsynced(): boolean {
    return this.dirty.size > 0;
  }

  /** Makes every line written since the last flush durable (each note touched); throws once if any note could not be. */
  async flush(): Promise<void> {
    const notes = [...this.dirty];
    this.dirty.clear();
    let failed: unknown;
    for (const [key, note] of notes) {
      try {
        await note.files.syncNote(note.date);
      } catch (err) {
        // Kept dirty: the next flush tries again; the session log keeps its lines meanwhile.
        this.dirty.set(key, note);
        this.log.warn({ err, note: key }, 'a daily note could not be synced; its lines stay in the session log until it can');
        failed ??= err;
      }
    }
    if (failed !== undefined) throw failed;
  }
}
