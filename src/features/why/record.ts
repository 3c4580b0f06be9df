/**
 * What `/why` keeps of one answer: the memory it was built from, as the turn had it (never
 * recomputed later). Small by design — ids and short excerpts, at most MAX_ITEMS per answer,
 * the last KEEP_PER_CHAT answers per chat — so the store stays a few kilobytes a chat.
 */

/**
 * Where an item came from:
 * - `memory`: a MEMORY.md entry in `# Memory`;
 * - `note`: a line of today's or a recent day's notes in `# Memory`;
 * - `fact` / `message`: a `# Relevant Memory` hit (a fact, or a message of another conversation), `ref` its index id;
 * - `tool`: what a memory tool returned during the turn (`tool` its name).
 */
export type WhyKind = 'memory' | 'note' | 'fact' | 'message' | 'tool';

export interface WhyItem {
  kind: WhyKind;
  /** The text, cut to EXCERPT_CHARS (one line). */
  text: string;
  /** The index id (`fact_…`, `mem_…`) of a fact or message. */
  ref?: string | undefined;
  /** For `tool`: the tool's name. */
  tool?: string | undefined;
}

/** One answer's record. */
export interface WhyRecord {
  /** `channel:chatId`. */
  chat: string;
  /** The turn's id (the one an apology shows): what buttons and `/why forget <turn> <n>` name. */
  turn: string;
  /** When the answer was made (ISO 8601). */
  at: string;
  /** The channel's ids of the messages the answer went out as (Telegram), for `/why` sent as a reply to one. */
  sent: string[];
  items: WhyItem[];
}

/** Items kept per answer (the first ones: the prompt's order, then the tools'). */
export const MAX_ITEMS = 20;
/** Answers kept per chat, the newest. */
export const KEEP_PER_CHAT = 20;
/** Characters kept of an item's text. */
export const EXCERPT_CHARS = 200;

/** A record's items with `test` matching none of their text: what a forget leaves (undefined: nothing changed). */
export function withoutMatching(r: WhyRecord, test: (text: string) => boolean): WhyRecord | undefined {
  const items = r.items.filter((i) => !test(i.text) && !(i.ref !== undefined && test(i.ref)));
  return items.length === r.items.length ? undefined : { ...r, items };
}

/** A record as read back (file or row): the shape checked, so a damaged one is skipped, not shown. */
export function toWhyRecord(v: unknown): WhyRecord | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const r = v as Partial<WhyRecord>;
  if (typeof r.chat !== 'string' || typeof r.turn !== 'string' || typeof r.at !== 'string') return undefined;
  if (!Array.isArray(r.sent) || !Array.isArray(r.items)) return undefined;
  return { chat: r.chat, turn: r.turn, at: r.at, sent: r.sent.map(String), items: r.items.filter((i) => i && typeof i.text === 'string') };
}
