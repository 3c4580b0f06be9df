/**
 * The placeholders (placeholders.ts) with DATABASE_URL: a row per placeholder in
 * `telegram_placeholders` (migrations/pg/073_telegram_placeholders.sql), each naming the process
 * that shows it. Several processes may serve the bot (docs/cluster.md), each writing only its own
 * rows: one process's start or write never drops another's placeholder.
 *
 * A process that runs a message again (its chat came from a process that died mid-answer) first
 * `adopt`s that message's placeholder, in one statement that gives it a new owner only while the
 * old owner is not alive — so the half answer is finished in place, once, by one process. An
 * owner still seen alive is waited for, up to half the lease: a process killed between its
 * heartbeat and the renewal of its claims that follows is seen alive for up to a third of the
 * lease after its chats passed to another (cluster/registry.ts beats, then renews). A
 * placeholder being finished (its final edit may have gone out) is not taken; such rows and those
 * of messages never run again are deleted after a day. Nothing is settled at start: whatever a
 * dead process left is its chat's next runner's to take (main skips `settleInterrupted` in a
 * cluster), and a running process's placeholders are its own.
 */
import type { Logger } from '../../core/log.js';
import { sleep } from '../../core/retry.js';
import type { Database } from '../../storage/pg/database.js';
import { ownerAlive, type ProcessOwner } from '../../storage/pg/owner.js';
import { placeholderKey, type Placeholder, type Placeholders } from './placeholders.js';

/** Between two tries to take a placeholder whose owner is still seen alive. */
const ADOPT_EVERY_MS = 200;

/** Rows older than this are of messages nobody runs again: deleted at a start. */
const FORGET_AFTER = '1 day';

interface Row {
  chat: string;
  source: string;
  tg_chat: string;
  message_id: string;
  thread_id: string | null;
}

export class PgPlaceholders implements Placeholders {
  /** Adopted and not yet taken by the reply (replyFor follows adopt at once). */
  private readonly adopted = new Map<string, Placeholder>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly owner: ProcessOwner,
    private readonly log: Logger,
  ) {}

  async load(): Promise<void> {
    await this.db.query(`DELETE FROM telegram_placeholders WHERE updated_at < now() - interval '${FORGET_AFTER}'`);
  }

  async adopt(chat: string, source: string): Promise<void> {
    const params = [chat, source, this.owner.id, this.owner.leaseMs];
    const others = 'chat = $1 AND source = $2 AND NOT finishing AND owner <> $3';
    const until = Date.now() + this.owner.leaseMs / 2;
    let r: Row | undefined;
    for (;;) {
      const { rows } = await this.db.query<Row & Record<string, unknown>>(
        `UPDATE telegram_placeholders t SET owner = $3, updated_at = now() WHERE ${others} AND NOT ${ownerAlive('t.owner', '$4')}
          RETURNING chat, source, tg_chat, message_id, thread_id`,
        params,
      );
      r = rows[0];
      if (r || Date.now() >= until) break;
      const { rowCount } = await this.db.query(`SELECT 1 FROM telegram_placeholders t WHERE ${others} AND ${ownerAlive('t.owner', '$4')}`, params);
      if (rowCount === 0) break;
      await sleep(ADOPT_EVERY_MS);
    }
    if (!r) return;
    this.adopted.set(placeholderKey(chat, source), {
      chat: r.chat,
      source: r.source,
      chatId: r.tg_chat,
      messageId: Number(r.message_id),
      threadId: r.thread_id === null ? undefined : Number(r.thread_id),
    });
  }

  take(chat: string, source: string | undefined): Placeholder | undefined {
    if (source === undefined) return undefined;
    const p = this.adopted.get(placeholderKey(chat, source));
    this.adopted.delete(placeholderKey(chat, source));
    return p;
  }

  /** A dead process's placeholders are taken by the runner of their messages, never settled at start. */
  leftOver(): Placeholder[] {
    return [];
  }

  add(p: Placeholder): Promise<void> {
    return this.write(
      `INSERT INTO telegram_placeholders (chat, source, owner, tg_chat, message_id, thread_id) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (chat, source) DO UPDATE SET owner = $3, tg_chat = $4, message_id = $5, thread_id = $6, finishing = false, updated_at = now()`,
      [p.chat, p.source, this.owner.id, p.chatId, p.messageId, p.threadId ?? null],
    );
  }

  finishing(chat: string, source: string): Promise<void> {
    return this.write('UPDATE telegram_placeholders SET finishing = true, updated_at = now() WHERE chat = $1 AND source = $2 AND owner = $3', [
      chat,
      source,
      this.owner.id,
    ]);
  }

  remove(chat: string, source: string): Promise<void> {
    return this.write('DELETE FROM telegram_placeholders WHERE chat = $1 AND source = $2 AND owner = $3', [chat, source, this.owner.id]);
  }

  /** One write at a time, in the order asked (a placeholder's add, finishing and remove follow each other closely). */
  private write(sql: string, params: unknown[]): Promise<void> {
    const next = this.chain.catch(() => undefined).then(() => this.db.query(sql, params));
    this.chain = next;
    return next.then(
      () => undefined,
      (err: unknown) => this.log.warn({ err }, 'a placeholder could not be recorded (a crash now could leave a half answer)'),
    );
  }
}
