/**
 * Albums: several messages a channel marks as one album (Telegram's media group — photos sent
 * together arrive as one message each, usually within a second) are answered as one message.
 *
 * Each item is journaled as it arrives, like any message (intake.ts), and queued in its chat.
 * Here the items of an open album wait together until none came for `waitMs`: the job of the
 * first item to reach the front of the chat's queue collects them all into one message, and
 * the jobs of the others, when their turn comes, find they were taken and only close.
 *
 * Why in the intake and not in the channel: the journal is here. An album cut by a restart is
 * recovered item by item from the journal and collected again the same way — a recovered item
 * opens the window anew, so items Telegram sends again after the restart still join it.
 */
import type { InboundMessage } from '../core/message.js';
import type { InterruptedCall } from '../queue/inbox.js';
import { readImageRef } from '../media/attachments.js';
import { sleep } from '../core/retry.js';

export interface AlbumItem {
  journalId: string;
  msg: InboundMessage;
  /** Restarts its handling survived (journal recovery); 0 for a fresh item. */
  attempt: number;
  /** Tool calls an earlier run of it died in (journal recovery): the album does not run those tools again. */
  interrupted?: InterruptedCall[] | undefined;
  /** Tool calls an earlier run of it ended (journal recovery): one that changes something is not run again. */
  completed?: InterruptedCall[] | undefined;
  /** Settles once the item is on disk in the journal. */
  durable?: Promise<unknown> | undefined;
}

interface OpenAlbum {
  items: AlbumItem[];
  lastAt: number;
}

export class AlbumCollector {
  private readonly open = new Map<string, OpenAlbum>();
  /** Journal ids of items a collected album took, until their own job comes up. */
  private readonly taken = new Set<string>();

  constructor(
    private readonly waitMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The album's key: its chat (session key) and the channel's album id. */
  static keyOf(sessionKey: string, albumId: string): string {
    return `${sessionKey}\u0000${albumId}`;
  }

  isOpen(key: string): boolean {
    return this.open.has(key);
  }

  /** An item arrived (or was recovered): it joins its album, and the quiet window starts again. */
  add(key: string, item: AlbumItem): void {
    const album = this.open.get(key);
    if (album) {
      album.items.push(item);
      album.lastAt = this.now();
    } else {
      this.open.set(key, { items: [item], lastAt: this.now() });
    }
  }

  /** True (once) when this item went with an album collected before its own job came up. */
  wasTaken(journalId: string): boolean {
    return this.taken.delete(journalId);
  }

  /**
   * Waits until the album has had no new item for the window, then closes it and returns its
   * items. An item arriving later opens a new album under the same key.
   */
  async collect(key: string, leader: string): Promise<AlbumItem[]> {
    for (;;) {
      const album = this.open.get(key);
      if (!album) return [];
      const wait = album.lastAt + this.waitMs - this.now();
      if (wait <= 0) break;
      await sleep(wait);
    }
    const items = this.open.get(key)!.items;
    this.open.delete(key);
    for (const it of items) if (it.journalId !== leader) this.taken.add(it.journalId);
    return items;
  }
}

/**
 * The album's items as one message: in message order (an item Telegram sent twice counts
 * once), each item's text — its placeholder and its own caption — on its own line, every image
 * in `images`. One item left (an album cut by the window) is an ordinary image message.
 */
export function mergeAlbum(items: AlbumItem[]): InboundMessage {
  const seen = new Set<string>();
  const unique = items.filter((it) => {
    const id = it.msg.messageId;
    if (id === undefined) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  const order = (m: InboundMessage) => Number(m.messageId ?? Number.NaN);
  unique.sort((a, b) => (Number.isFinite(order(a.msg)) && Number.isFinite(order(b.msg)) ? order(a.msg) - order(b.msg) : 0));
  const first = unique[0]!.msg;
  if (unique.length === 1) return first;
  const images = unique.flatMap((it) => readImageRef(it.msg.image) ?? []);
  const { image: _single, ...rest } = first;
  const quotes = new Set<string>();
  return { ...rest, text: unique.map((it) => onceQuoted(it.msg.text, quotes)).join('\n'), images };
}

/**
 * An album sent as a reply carries the quoted message on every item (the channel puts it before
 * the item's text: `[Quoting a message by …]`, `> …` lines, a blank line); the album says it once.
 */
function onceQuoted(text: string, seen: Set<string>): string {
  const quote = /^\[Quoting [^\n]*\]\n(?:>[^\n]*\n)*\n/.exec(text)?.[0];
  if (quote === undefined) return text;
  if (seen.has(quote)) return text.slice(quote.length);
  seen.add(quote);
  return text;
}
