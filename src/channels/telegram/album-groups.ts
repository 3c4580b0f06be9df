/**
 * Albums in groups. The bot answers a group message only when it is addressed (a mention, a
 * reply to the bot), and in an album only the captioned item can carry the mention — Telegram
 * puts an album's caption on its first item. So an album whose item addressed the bot is
 * remembered for a while, and its further items count as addressed too: the album is answered
 * with all its pictures, not just the captioned one. Memory only, and small: an entry expires
 * long after any album has finished arriving. After a kill, the channel adds the albums of the
 * unfinished messages the journal gives back (TelegramChannelOptions.unfinished).
 */
const KEEP_MS = 10 * 60_000;
const MAX_ENTRIES = 1000;

export class AddressedAlbums {
  private readonly seen = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  add(chatId: string, albumId: string): void {
    const at = this.now();
    this.seen.delete(`${chatId}:${albumId}`);
    this.seen.set(`${chatId}:${albumId}`, at);
    // Oldest first (insertion order): drop what expired, and the oldest beyond the cap.
    for (const [key, t] of this.seen) {
      if (this.seen.size <= MAX_ENTRIES && at - t <= KEEP_MS) break;
      this.seen.delete(key);
    }
  }

  has(chatId: string, albumId: string): boolean {
    const t = this.seen.get(`${chatId}:${albumId}`);
    return t !== undefined && this.now() - t <= KEEP_MS;
  }
}
