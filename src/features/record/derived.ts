/**
 * What a turn writes besides its session: the exchange's daily-note line (MemoryPersist, 50)
 * and its two episode rows in memory.db (Indexing, 55). Both are derived from the session log,
 * the one durable record of a turn (one fsync, before the reply): they are written without
 * waiting for fsync, and the start after a crash writes them again from the log's lines where
 * they are missing (`recover`) — every answered exchange once, none twice. The same functions
 * make a line or a row from the session's messages on both paths, so both write the same bytes.
 */
import type { Logger } from '../../core/log.js';
import type { RuntimeConfigStore } from '../../config/runtime.js';
import type { SessionMessage } from '../../sessions/model.js';
import type { SessionStore, WalLine } from '../../sessions/store.js';
import type { DailyNotes, NoteChat } from '../../memory/daily-notes.js';
import type { MemoryService } from '../../memory/service.js';
import type { IndexingService } from '../../index/ingest.js';
import type { EpisodeInput } from '../../index/store/repository.js';
import type { Turn } from '../../turn/turn.js';

/** How the bot is named in its own episode rows. */
export const BOT_SPEAKER = 'assistant';

export interface DerivedDeps {
  notes: DailyNotes;
  indexing: IndexingService;
  memory: MemoryService;
  runtime: RuntimeConfigStore;
  sessions: SessionStore;
  log: Logger;
}

/** An answered exchange as the session has it. */
export interface Exchange {
  chat: NoteChat;
  /** The conversation the rows belong to (metadata.conversationId when it was logged). */
  conversation: string;
  user: SessionMessage;
  answer: SessionMessage;
}

/** A turn's exchange (after ToolLoop 30 set its answer). */
export function exchangeOf(turn: Turn): Exchange {
  return {
    chat: { channel: turn.inbound.channel, chatId: turn.inbound.chatId },
    conversation: turn.session.metadata.conversationId,
    user: turn.userMessage,
    answer: turn.answer!,
  };
}

/** The two episode rows of an exchange: the user's words at the time they were received, the answer at its own time. */
export function episodesOf(scope: string, x: Exchange): [EpisodeInput & { sourceMessageId: string }, EpisodeInput & { sourceMessageId: string }] {
  return [
    {
      content: x.user.content,
      role: 'user',
      speaker: x.user.senderName ?? 'user',
      sessionId: x.conversation,
      scope,
      eventTime: new Date(x.user.timestamp),
      sourceMessageId: x.user.sourceId ?? x.user.id,
    },
    {
      content: x.answer.content,
      role: 'assistant',
      speaker: BOT_SPEAKER,
      sessionId: x.conversation,
      scope,
      eventTime: new Date(x.answer.timestamp),
      sourceMessageId: x.answer.id,
    },
  ];
}

/**
 * The user's message an answer replies to: the nearest user message before it in `messages`,
 * unless an earlier answer comes first (the question is not there: /forget took it out).
 */
function questionOf(messages: SessionMessage[], answerAt: number): SessionMessage | undefined {
  for (let i = answerAt - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user') return m;
    if (m.role === 'assistant' && !(m.toolCalls && m.toolCalls.length > 0)) return undefined;
  }
  return undefined;
}

export class DerivedWrites {
  constructor(private readonly deps: DerivedDeps) {}

  /** MemoryPersist (50): the exchange's note line, written (not fsynced). */
  async note(x: Exchange): Promise<void> {
    const entry = this.deps.notes.entryOf(x.answer, x.user);
    if (entry) await this.deps.notes.append(x.chat, entry);
  }

  /** Indexing (55): the exchange's two episode rows (no LLM; embeddings queued). */
  index(x: Exchange): void {
    const scope = this.deps.memory.scopeKey(x.chat.channel, x.chat.chatId);
    for (const e of episodesOf(scope, x)) this.deps.indexing.ingestMessage(e);
  }

  /** Makes the note lines written so far durable: before the session log forgets its lines. */
  flush(): Promise<void> {
    return this.deps.notes.flush();
  }

  /**
   * At start, for every line of the session log the last run left: the note line and the index
   * rows of each answer (and the note line of each reminder) it holds, where they are missing.
   * Returns what was written again.
   */
  async recover(lines: WalLine[]): Promise<{ notes: number; rows: number }> {
    if (lines.length === 0) return { notes: 0, rows: 0 };
    const memoryOn = this.deps.runtime.get().memory.enabled;
    const indexOn = this.deps.indexing.index.enabled;
    let notes = 0;
    let rows = 0;
    for (const line of lines) {
      for (let i = 0; i < line.messages.length; i++) {
        const answer = line.messages[i]!;
        if (answer.role !== 'assistant' || answer.stopped || (answer.toolCalls && answer.toolCalls.length > 0)) continue;
        const chat = { channel: line.channelType, chatId: line.chatId };
        const user = answer.reminder ? undefined : (questionOf(line.messages, i) ?? (await this.questionInSession(chat, answer)));
        try {
          const entry = this.deps.notes.entryOf(answer, user);
          if (memoryOn && entry && (await this.deps.notes.ensure(chat, entry))) notes++;
          if (indexOn && user && !answer.reminder) {
            const scope = this.deps.memory.scopeKey(chat.channel, chat.chatId);
            for (const e of episodesOf(scope, { chat, conversation: line.conversation ?? '', user, answer })) {
              if (this.deps.indexing.ingestOnce(e) === 'saved') rows++;
            }
          }
        } catch (err) {
          // One unreadable note (a link out, a FIFO) does not stop the others; its words stay in the session.
          this.deps.log.warn(
            { err, session: `${chat.channel}:${chat.chatId}` },
            'an exchange of the session log could not be written to its note or the index',
          );
        }
      }
    }
    if (notes + rows > 0) this.deps.log.warn({ notes, rows }, 'wrote the note lines and index rows a crash kept from being written');
    return { notes, rows };
  }

  /** An answer's question when an earlier line logged it: looked up in the chat's session. */
  private async questionInSession(chat: NoteChat, answer: SessionMessage): Promise<SessionMessage | undefined> {
    const messages = (await this.deps.sessions.getOrCreate(chat.channel, chat.chatId)).messages;
    const at = messages.findIndex((m) => m.id === answer.id);
    return at < 0 ? undefined : questionOf(messages, at);
  }
}
