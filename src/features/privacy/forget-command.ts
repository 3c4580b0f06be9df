/**
 * `/forget <words>` shows what this chat's memory holds that contains the words, with counts;
 * `/forget confirm` removes all of it (privacy/forget.ts) and says what went where;
 * `/forget cancel` drops the request. A request waits 10 minutes for its confirmation, in
 * memory only (the words are not written anywhere while they wait).
 */
import type { Command } from '../../turn/command.js';
import { describeCounts, MIN_FORGET_CHARS, Phrase, type ForgetService } from './forget.js';
import { sessionKey } from '../../sessions/model.js';
import { LRUCache } from 'lru-cache';

const CONFIRM_WINDOW_MS = 10 * 60_000;

export function createForgetCommand(deps: { forget: Pick<ForgetService, 'apply' | 'preview' | 'redactLogs'> }): Command {
  const { forget } = deps;
  // A preview waits for its confirm per chat; the least recently asked go beyond the bound.
  const pending = new LRUCache<string, { words: string; at: number }>({ max: 10_000 });
  return {
    name: 'forget',
    description: 'Forget words everywhere in your memory: /forget <words> shows what matches, /forget confirm removes it',
    // The preview's counts already tell whether the shared memory holds the words.
    access: 'managers',
    async run({ inbound, args }) {
      const key = sessionKey(inbound.channel, inbound.chatId);
      const chat = { channel: inbound.channel, chatId: inbound.chatId };
      const arg = args.trim();
      const sub = arg.toLowerCase();
      if (!arg) return 'Tell me what to forget: /forget <words> shows everything I keep that contains them; then /forget confirm removes it.';
      if (sub === 'cancel') {
        const had = pending.delete(key);
        return had ? 'Cancelled: nothing was forgotten.' : 'There was no /forget request to cancel.';
      }
      if (sub === 'confirm') {
        const req = pending.get(key);
        pending.delete(key);
        if (!req || Date.now() - req.at > CONFIRM_WINDOW_MS) {
          return req ? 'That /forget request is older than 10 minutes; send /forget <words> again.' : 'Nothing to confirm: send /forget <words> first.';
        }
        const r = await forget.apply(chat, req.words, { notify: true });
        const removed = describeCounts(r.counts);
        const also = [
          r.versionLines > 0 ? `${r.versionLines} line${r.versionLines === 1 ? '' : 's'} of older MEMORY.md versions` : '',
          'the session log and the message journal',
        ]
          .filter(Boolean)
          .join(', ');
        return [
          `🗑 Forgot “${r.words}”.${removed ? ` Removed: ${removed}${r.memoryVersion ? ` (MEMORY.md saved as version #${r.memoryVersion})` : ''}.` : ''} Also taken out of ${also}.`,
          r.indexOff
            ? `The search index could not be cleaned (${r.indexOff}); send /forget ${'<words>'} again once it works.`
            : 'Note and history lines now say [forgotten]; the index was compacted so no deleted text stays on disk.',
        ].join('\n');
      }
      if (arg.length < MIN_FORGET_CHARS) return `“${arg}” is too short to forget safely (at least ${MIN_FORGET_CHARS} characters); give a word or phrase.`;
      const preview = await forget.preview(chat, arg);
      if (preview.total === 0) {
        // The request itself is in the message journal: taken out at once.
        await forget.redactLogs(chat, new Phrase(arg));
        pending.delete(key);
        return `Nothing in this chat's memory contains “${preview.words}”; nothing to forget.`;
      }
      pending.set(key, { words: arg, at: Date.now() });
      return `Found “${preview.words}” in: ${describeCounts(preview.counts)}.\nSend /forget confirm to remove all of it everywhere (within 10 minutes), or /forget cancel to keep it.`;
    },
  };
}
