/**
 * What the memory page shows, read from the same places the bot uses: the chat list (sessions/
 * and memory/, named from sessions.names.json), one chat's MEMORY.md with its versions, notes, history, facts, entities, the
 * session, a per-day timeline, and search through MemoryIndex.search (the search_memory tool's
 * function). Reads only; edits go through MemoryFiles.update and ForgetService (server.ts).
 */
import { createHash } from 'node:crypto';
import type { Config } from '../config/env.js';
import type { SessionStore } from '../sessions/store.js';
import type { MemoryService } from '../memory/service.js';
import type { MemoryIndex } from '../index/memory-index.js';
import type { ForgetService } from '../features/privacy/forget.js';
import type { PendingApprovals } from '../features/memory-access/pending.js';
import { HISTORY_FILE, MEMORY_FILE, type MemoryFiles } from '../memory/files.js';
import { withinDeadline } from '../storage/regular.js';
import { NO_FOOTPRINT } from '../storage/footprint.js';
import { isSummary } from '../memory/compaction.js';
import type { UsageRow, UsageStore } from '../features/usage/usage.js';
import type { ChatNames } from '../sessions/names.js';
import type { ChatKind } from '../core/message.js';
import { chatKey, type ChatShapeReader } from '../core/chat.js';

export interface ChatSummary {
  /** `{channel}:{chatId}` as the channel gave it: the page's handle for the chat. */
  key: string;
  channel: string;
  chatId: string;
  /** ISO time of the newest file change in its session or memory folder. */
  lastActivity: string | null;
  /** Bytes on disk: session file + memory folder. */
  bytes: number;
  /** What people call the chat (sessions.names.json), else a stand-in: "Topic 7", "Group", "Terminal". */
  name: string;
  /** False while no name has been seen (the page shows the stand-in as such). */
  named: boolean;
  kind: ChatKind | 'chat';
  /** A topic's group (which need not have a session of its own). */
  parent?: { key: string; name: string; named: boolean } | undefined;
}

/**
 * How the page names a chat: the kept name, else what its id tells as its channel reads it
 * (`shapes`, given by the channels: a topic, a group, a private chat, the terminal).
 */
export function chatLabel(
  names: Pick<ChatNames, 'get'>,
  channel: string,
  chatId: string,
  shapes: Readonly<Record<string, ChatShapeReader>> = {},
): Pick<ChatSummary, 'name' | 'named' | 'kind' | 'parent'> {
  const kept = names.get(chatKey({ channel, chatId }));
  let kind: ChatSummary['kind'] = kept?.kind ?? 'chat';
  let stand = kind === 'chat' ? `${channel} ${chatId}` : { private: 'Private chat', group: 'Group', topic: 'Topic' }[kind];
  let parentKey = kept?.parent;
  const shape = shapes[channel]?.(chatId);
  if (shape) {
    [kind, stand] = [shape.kind, shape.stand];
    if (shape.parent !== undefined) parentKey ??= chatKey({ channel, chatId: shape.parent });
  }
  const groupName = parentKey ? names.get(parentKey)?.name : undefined;
  const parent = parentKey ? { key: parentKey, name: groupName ?? 'Group', named: groupName !== undefined } : undefined;
  return { name: kept?.name ?? stand, named: kept?.name !== undefined, kind, parent };
}

const RECENT_NOTES = 7;
/** Days the timeline draws (the newest with any activity). */
const TIMELINE_DAYS = 60;
/** Days the token chart draws: the last 30, today included, empty days as zero. */
export const USAGE_DAYS = 30;

/** One day of the token chart: answers apart from background work (summaries, consolidation, facts, reflection). */
export interface UsageDay {
  day: string;
  /** prompt + completion tokens of the chat's answers. */
  answers: number;
  /** prompt + completion tokens of background calls made for the chat. */
  background: number;
  promptTokens: number;
  /** Part of promptTokens the LLM server reported as served from its cache (0 when it reports none). */
  cachedTokens: number;
  calls: number;
}

/** `day` plus n calendar days (YYYY-MM-DD arithmetic in UTC, so no time zone shift can skip or repeat a day). */
function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** usage.db rows of one chat folded into one entry per day from `since` to `until`. */
export function usageDays(rows: UsageRow[], since: string, until: string): UsageDay[] {
  const days = new Map<string, UsageDay>();
  for (let d = since; d <= until; d = addDays(d, 1)) days.set(d, { day: d, answers: 0, background: 0, promptTokens: 0, cachedTokens: 0, calls: 0 });
  for (const r of rows) {
    const d = days.get(r.day);
    if (!d) continue;
    const total = r.promptTokens + r.completionTokens;
    if (r.kind === 'answer') d.answers += total;
    else d.background += total;
    d.promptTokens += r.promptTokens;
    d.cachedTokens += r.cachedTokens;
    d.calls += r.calls;
  }
  return [...days.values()];
}

export const hashText = (t: string): string => createHash('sha256').update(t).digest('hex');

/** The page's reads wait at most this long for one file (storage/regular.ts). */
export { READ_DEADLINE_MS, withinDeadline } from '../storage/regular.js';

/** What the page reads and changes: the stores the bot keeps a chat's memory in, nothing else of the daemon. */
export interface PageDeps extends Pick<Config, 'memoryScope'> {
  sessions: Pick<SessionStore, 'chats' | 'footprint' | 'getOrCreate' | 'names'>;
  memory: MemoryService;
  index: MemoryIndex;
  usage: Pick<UsageStore, 'dayOf' | 'rows'>;
  /** Removing words (the Forget tab), as /forget does. */
  forget: Pick<ForgetService, 'preview' | 'apply'>;
  /** Memory writes held for the owner's approval: listed, approved, rejected as `/memory pending` does. */
  pending?: Pick<PendingApprovals, 'list' | 'approve' | 'reject'> | undefined;
  /** Each channel's reading of its chat ids, for the names of chats not named yet (chatLabel). */
  chatShapes?: Readonly<Record<string, ChatShapeReader>> | undefined;
}

export class MemoryPageData {
  constructor(private readonly s: PageDeps) {}

  /** Chats with a session or a memory of their own, most recently active first. */
  async chats(): Promise<ChatSummary[]> {
    const keys = new Map<string, { channel: string; chatId: string }>();
    for (const chat of await this.s.sessions.chats()) keys.set(`${chat.channel}:${chat.chatId}`, chat);
    if (this.s.memoryScope === 'chat') {
      for (const chat of await this.s.memory.chats()) if (!keys.has(`${chat.channel}:${chat.chatId}`)) keys.set(`${chat.channel}:${chat.chatId}`, chat);
    }
    const out: ChatSummary[] = [];
    for (const [key, { channel, chatId }] of keys) {
      const session = await this.s.sessions.footprint(channel, chatId);
      const mem = this.s.memoryScope === 'chat' ? await this.s.memory.forChat(channel, chatId).footprint() : NO_FOOTPRINT;
      const mtime = Math.max(session.mtime, mem.mtime);
      out.push({
        key,
        channel,
        chatId,
        lastActivity: mtime ? new Date(mtime).toISOString() : null,
        bytes: session.bytes + mem.bytes,
        ...chatLabel(this.s.sessions.names, channel, chatId, this.s.chatShapes),
      });
    }
    return out.sort((a, b) => (b.lastActivity ?? '').localeCompare(a.lastActivity ?? '') || a.key.localeCompare(b.key));
  }

  /** The chat named by a key from the list; undefined for anything else (so no made-up key reaches the disk). */
  async find(key: string): Promise<ChatSummary | undefined> {
    return (await this.chats()).find((c) => c.key === key);
  }

  // Memory files are read through the bot's own readers (memory/files.ts): inside the chat's
  // folder once links are followed, regular files only (a FIFO is refused unopened), secrets
  // scrubbed; and each within READ_DEADLINE_MS. A file that fails either way shows as empty
  // here; the page says so where it matters (the save of MEMORY.md checks it again under its lock).

  async memory(chat: ChatSummary): Promise<{ text: string; hash: string; versions: unknown[] }> {
    const files = this.s.memory.forChat(chat.channel, chat.chatId);
    const text = await withinDeadline(MEMORY_FILE, files.readMemory());
    return { text, hash: hashText(text), versions: await withinDeadline('versions/index.json', files.versions.list()) };
  }

  async version(chat: ChatSummary, n: number): Promise<string | undefined> {
    return withinDeadline(`versions/${n}.md`, this.s.memory.forChat(chat.channel, chat.chatId).readVersion(n));
  }

  async notes(chat: ChatSummary): Promise<Array<{ date: string; text: string }>> {
    const files = this.s.memory.forChat(chat.channel, chat.chatId);
    const list = (await files.listNotes()).slice(-RECENT_NOTES).reverse();
    return Promise.all(list.map(async (n) => ({ date: n.date, text: await this.note(files, n.date) })));
  }

  /** One daily note's text, '' when it cannot be read (a link out, not a regular file, too slow). */
  private note(files: MemoryFiles, date: string): Promise<string> {
    return withinDeadline(`${date}.md`, files.readNote(date)).catch(() => '');
  }

  async history(chat: ChatSummary, max = 50): Promise<Array<{ at: string; text: string }>> {
    const text = await withinDeadline(HISTORY_FILE, this.s.memory.forChat(chat.channel, chat.chatId).readHistory()).catch(() => '');
    const entries = text
      .split(/^## /m)
      .filter((e) => e.trim())
      .map((e) => {
        const nl = e.indexOf('\n');
        return { at: (nl < 0 ? e : e.slice(0, nl)).trim(), text: nl < 0 ? '' : e.slice(nl + 1).trim() };
      });
    return entries.slice(-max).reverse();
  }

  private scope(chat: ChatSummary): string {
    return this.s.memory.scopeKey(chat.channel, chat.chatId);
  }

  /** Facts of the chat with confidence, decay rate, whether they are retired or confirmed, and what corrections changed. */
  facts(chat: ChatSummary, max = 200): Array<Record<string, unknown>> {
    const browse = this.s.index.browse;
    if (!browse) return [];
    const iso = (sec: number) => new Date(sec * 1000).toISOString();
    // A fact's history: the values corrections replaced on the way to it, oldest first, each
    // with when it was learnt and when it was corrected; a replaced fact names the value that holds now.
    const corrections = this.s.index.corrections(this.scope(chat));
    const history = new Map<string, Array<{ content: string; date: string; corrected: string }>>();
    for (const c of corrections) {
      const list = history.get(c.currentId) ?? [];
      list.push({ content: c.old, date: iso(c.since), corrected: iso(c.until) });
      history.set(c.currentId, list);
    }
    const current = new Map(corrections.map((c) => [c.id, { id: c.currentId, content: c.current }]));
    return browse.facts(this.scope(chat), max).map((r) => ({
      id: r.id,
      content: r.content,
      confidence: r.confidence,
      decayRate: r.decayRate,
      date: new Date(r.t * 1000).toISOString(),
      retired: r.retired ? new Date(r.retired * 1000).toISOString() : null,
      lastAccessed: r.accessed ? new Date(r.accessed * 1000).toISOString() : null,
      // confirm_fact sets the decay rate to 0: such a fact never fades.
      confirmed: r.decayRate === 0 && !r.retired,
      history: history.get(r.id) ?? [],
      replacedBy: current.get(r.id) ?? null,
    }));
  }

  /** Entities mentioned in the chat, most linked first, each with its newest memories. */
  entities(chat: ChatSummary, max = 30): Array<{ name: string; type: string; links: number; memories: string[] }> {
    return this.s.index.browse?.entities(this.scope(chat), max) ?? [];
  }

  async session(chat: ChatSummary): Promise<Array<{ role: string; content: string; timestamp: string; summary: boolean; sender?: string | undefined }>> {
    const session = await this.s.sessions.getOrCreate(chat.channel, chat.chatId);
    return session.messages.map((m) => ({ role: m.role, content: m.content, timestamp: m.timestamp, summary: isSummary(m), sender: m.senderName }));
  }

  /** The search_memory tool's search (MemoryIndex.search, hybrid, this chat's scope), with the lists each hit came from. */
  async search(chat: ChatSummary, query: string, limit = 10) {
    if (!this.s.index.enabled) return { off: true, results: [] };
    return { off: false, results: this.s.index.search(query, { scope: this.scope(chat), limit }) };
  }

  /**
   * Tokens per day of the chat from usage.db (the rows /status reads: billed to `channel:chatId`),
   * the last USAGE_DAYS days in the configured time zone. Embeddings are batched across chats
   * (billed to `*`), and with MEMORY_SCOPE=global the shared memory's background work is billed
   * to `global`: neither is in any one chat's chart.
   */
  async usage(chat: ChatSummary): Promise<{ since: string; until: string; days: UsageDay[] }> {
    const until = this.s.usage.dayOf();
    const since = addDays(until, -(USAGE_DAYS - 1));
    return { since, until, days: usageDays(await this.s.usage.rows({ since, until, chat: chat.key }), since, until) };
  }

  /** Per day: messages indexed, facts learnt, note lines, consolidations (history entries), MEMORY.md versions. */
  async timeline(chat: ChatSummary): Promise<Array<{ day: string; messages: number; facts: number; notes: number; consolidations: number; versions: number }>> {
    const days = new Map<string, { messages: number; facts: number; notes: number; consolidations: number; versions: number }>();
    const at = (day: string) => {
      let d = days.get(day);
      if (!d) days.set(day, (d = { messages: 0, facts: 0, notes: 0, consolidations: 0, versions: 0 }));
      return d;
    };
    for (const r of this.s.index.browse?.dailyCounts(this.scope(chat)) ?? []) {
      if (r.kind === 'episode') at(r.day).messages += r.n;
      else if (r.kind === 'fact') at(r.day).facts += r.n;
    }
    const files = this.s.memory.forChat(chat.channel, chat.chatId);
    for (const n of (await files.listNotes()).slice(-TIMELINE_DAYS)) {
      at(n.date).notes += (await this.note(files, n.date)).split('\n').filter((l) => l.trim()).length;
    }
    for (const h of await this.history(chat, 10_000)) if (/^\d{4}-\d\d-\d\d/.test(h.at)) at(h.at.slice(0, 10)).consolidations++;
    for (const v of (await this.memory(chat)).versions as Array<{ at: string }>) at(v.at.slice(0, 10)).versions++;
    return [...days.entries()]
      .map(([day, d]) => ({ day, ...d }))
      .sort((a, b) => a.day.localeCompare(b.day))
      .slice(-TIMELINE_DAYS);
  }
}
