/**
 * Albums in groups. The bot answers a group message only when it is addressed (a mention, a
 * reply to the bot), and in an album only the captioned item can carry the mention — Telegram
 * puts an album's caption on its first item. So an album whose item addressed the bot is
 * remembered for a while, and its further items count as addressed too: the album is answered
 * with all its pictures, not just the captioned one. Memory only, and small: an entry expires
 * long after any album has finished arriving. After a kill, the channel adds the albums of the
 * unfinished messages the journal gives back (TelegramChannelOptions.unfinished).
 */
import { LRUCache } from 'lru-cache';

const KEEP_MS = 10 * 60_000;
const MAX_ENTRIES = 1000;

export class AddressedAlbums {
  private readonly seen = new LRUCache<string, number>({ max: MAX_ENTRIES });

  constructor(private readonly now: () => number = Date.now) {}

  add(chatId: string, albumId: string): void {
    // The oldest leave beyond the cap; an expired one is refused by `has`.
    this.seen.set(`${chatId}:${albumId}`, this.now());
  }

  has(chatId: string, albumId: string): boolean {
    const t = this.seen.get(`${chatId}:${albumId}`);
    return t !== undefined && this.now() - t <= KEEP_MS;
  }
}
