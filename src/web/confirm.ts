/**
 * The memory page's confirm step, enforced by the server: a change that removes (forget) or
 * overwrites (saving MEMORY.md) is first previewed, and the preview hands out a one-use token
 * bound to exactly what was previewed (the chat and the words, or the chat, the text loaded
 * and the text to save). The change runs only with that token, so neither a stray click nor a
 * script can skip the preview. Tokens live in memory: a restart, 10 minutes or their use ends
 * them, and the page then asks to preview again.
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';

export const CONFIRM_TTL_MS = 10 * 60_000;
/** Open previews kept at once; the oldest go first (a page left open does not grow this). */
const MAX_OPEN = 100;

export class Confirmations {
  private readonly open = new LRUCache<string, { what: string; until: number }>({ max: MAX_OPEN });

  constructor(private readonly now: () => number = Date.now) {}

  /** A token for the change `what` (a string naming exactly what was previewed). */
  issue(what: string): string {
    const token = randomBytes(18).toString('base64url');
    this.open.set(token, { what, until: this.now() + CONFIRM_TTL_MS });
    return token;
  }

  /** True once for a live token issued for the same `what`; the token is used up either way. */
  take(token: unknown, what: string): boolean {
    if (typeof token !== 'string') return false;
    const t = this.open.get(token);
    if (!t) return false;
    this.open.delete(token);
    return t.what === what && t.until >= this.now();
  }
}
