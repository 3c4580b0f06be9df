/**
 * "typing…" while any message of a chat is being handled. Telegram shows a chat action for
 * about five seconds, so it is refreshed every `intervalMs` until the last message of that
 * chat (or forum topic) is done: counted per chat, so two queued messages share one timer.
 */
import type { Delivery } from './delivery.js';
import { sessionChatId } from './topics.js';

export class TypingIndicator {
  private readonly chats = new Map<string, { count: number; timer: NodeJS.Timeout }>();

  constructor(
    private readonly delivery: Delivery,
    private readonly intervalMs = 4000,
  ) {}

  /** Starts (or joins) the chat's indicator; the returned function ends this message's share, once. */
  start(chatId: string, threadId?: number): () => void {
    const key = sessionChatId({ chatId, threadId });
    const entry = this.chats.get(key);
    if (entry) entry.count++;
    else {
      void this.delivery.chatAction(chatId, 'typing', threadId);
      const timer = setInterval(() => void this.delivery.chatAction(chatId, 'typing', threadId), this.intervalMs);
      timer.unref();
      this.chats.set(key, { count: 1, timer });
    }
    let running = true;
    return () => {
      if (!running) return;
      running = false;
      this.release(key);
    };
  }

  private release(key: string): void {
    const entry = this.chats.get(key);
    if (!entry || --entry.count > 0) return;
    clearInterval(entry.timer);
    this.chats.delete(key);
  }
}
