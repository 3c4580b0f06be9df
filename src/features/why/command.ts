/**
 * `/why` — sent as a reply to one of the bot's answers, or alone for the last one — lists what
 * that answer was built from, as recorded when it was made (system.ts). Each item can be
 * forgotten (`/why forget <turn> <n>`: the /forget code path, ForgetService.apply, with the
 * item's words) and a fact corrected (`/why correct <turn> <n> <new text>`: the correct_fact
 * tool's call, MemoryIndex.correctFact). On Telegram the items come with buttons that send those
 * commands; elsewhere the reply says what to type. For the chat's managers only, like /memory:
 * the list shows the chat's memory word for word.
 */
import type { Command, CommandContext } from '../../turn/command.js';
import type { ReplyButton } from '../../core/channel.js';
import { chatKey } from '../../core/chat.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { MemoryService } from '../../memory/service.js';
import type { Embedder } from '../../index/upkeep/embeddings.js';
import type { Chat } from '../../core/chat.js';
import { KEEP_PER_CHAT, type WhyItem, type WhyRecord } from './record.js';
import type { WhyStore } from './store.js';

/** /forget's own path (features/privacy/forget.ts), handed in by the app: a feature does not import another. */
export interface ForgetPath {
  /** Forgets the words everywhere the chat's memory keeps them; `removed` says what went, in words ("" for nothing). */
  apply(chat: Chat, words: string): Promise<{ words: string; removed: string; indexOff?: string | undefined }>;
  /** The fewest characters it forgets (shorter words could match too much). */
  minChars: number;
}

export interface WhyCommandDeps {
  store: WhyStore;
  forget: ForgetPath;
  index: Pick<MemoryIndex, 'enabled' | 'correctFact' | 'whenWritable'>;
  memory: Pick<MemoryService, 'scopeKey'>;
  embedder?: Pick<Embedder, 'enqueue'> | undefined;
}

/** The correct_fact tool's bounds for a fact's text. */
const FACT_MIN_CHARS = 3;
const FACT_MAX_CHARS = 1000;

const LABEL: Record<WhyItem['kind'], string> = {
  memory: '🧠 MEMORY.md',
  note: '🗒 note',
  fact: '📌 fact',
  message: '💬 earlier message',
  tool: '🔧',
};

function describe(item: WhyItem): string {
  const label = item.kind === 'tool' ? `🔧 ${item.tool ?? 'tool'}${item.ref ? ` → ${item.ref}` : ''}` : `${LABEL[item.kind]}${item.ref ? ` ${item.ref}` : ''}`;
  return `${label}: ${item.text}`;
}

/** The fact an item stands for (a `# Relevant Memory` fact, or a search hit of one). */
const factOf = (item: WhyItem) => (item.ref?.startsWith('fact_') ? item.ref : undefined);

/**
 * The words that forget an item: its text without what the prompt added around it (a list
 * mark, a note's time and speaker) and without the mark of a cut. Forgetting them takes the
 * fact, entry or message whole and the note line's words (privacy/forget.ts).
 */
export function forgetWords(item: WhyItem): string {
  let t = item.text.replace(/…$/, '');
  if (item.kind === 'note')
    t = t
      .replace(/^\[[^\]]*\]\s*/, '')
      .replace(/^User:\s*/, '')
      .split(' | Assistant: ')[0]!;
  return t.trim();
}

function listing(r: WhyRecord, buttons: boolean): { text: string; rows: ReplyButton[][] } {
  const when = r.at.slice(11, 16);
  if (r.items.length === 0) return { text: `My answer of ${when} UTC used nothing from memory: it came from the conversation alone.`, rows: [] };
  const lines = r.items.map((item, i) => `${i + 1}. ${describe(item)}`);
  const rows = r.items.map((item, i) => [
    { text: `🗑 Forget ${i + 1}`, data: `/why forget ${r.turn} ${i + 1}` },
    ...(factOf(item) ? [{ text: `✏️ Correct ${i + 1}`, data: `/why correct ${r.turn} ${i + 1}` }] : []),
  ]);
  const how = buttons
    ? 'Press a button to forget an item (everywhere it is kept) or correct a fact.'
    : `To forget one everywhere: /why forget ${r.turn} <number>. To correct a fact: /why correct ${r.turn} <number> <the right text>.`;
  return { text: `🔎 My answer of ${when} UTC (turn ${r.turn}) was built from:\n${lines.join('\n')}\n\n${how}`, rows };
}

const NO_RECORD = `I have no record of that answer: I keep what my last ${KEEP_PER_CHAT} answers in this chat were built from, and a forget may have taken it. Send /why alone for my last answer.`;

async function itemOf(deps: WhyCommandDeps, ctx: CommandContext, turn: string | undefined, n: string | undefined): Promise<WhyItem | string> {
  const record = turn ? await deps.store.find(chatKey(ctx.inbound), { turn }) : undefined;
  if (!record) return NO_RECORD;
  const item = record.items[Number(n) - 1];
  return item ?? `That answer lists ${record.items.length} item(s); send /why to see them.`;
}

async function forgetItem(deps: WhyCommandDeps, ctx: CommandContext, turn?: string, n?: string): Promise<string> {
  const item = await itemOf(deps, ctx, turn, n);
  if (typeof item === 'string') return item;
  const words = forgetWords(item);
  if (words.length < deps.forget.minChars) return `“${words}” is too short to forget safely; use /forget <words> with more of it.`;
  const r = await deps.forget.apply({ channel: ctx.inbound.channel, chatId: ctx.inbound.chatId }, words);
  return [
    `🗑 Forgot “${r.words}”.${r.removed ? ` Removed: ${r.removed}.` : ' It was no longer kept anywhere.'}`,
    r.indexOff ? `The search index could not be cleaned (${r.indexOff}); press the button again once it works.` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

async function correctItem(deps: WhyCommandDeps, ctx: CommandContext, turn?: string, n?: string, text = ''): Promise<string> {
  const item = await itemOf(deps, ctx, turn, n);
  if (typeof item === 'string') return item;
  const id = factOf(item);
  if (!id)
    return 'Only a fact can be corrected here. For a MEMORY.md entry or a note, forget it (/why forget) and tell me the right thing, or edit it on the memory page.';
  const content = text.trim();
  if (!content) return `Send the right text for “${item.text}” as:\n/why correct ${turn} ${n} <the right text>`;
  if (content.length < FACT_MIN_CHARS || content.length > FACT_MAX_CHARS)
    return `A fact is ${FACT_MIN_CHARS} to ${FACT_MAX_CHARS} characters; nothing was changed.`;
  if (!deps.index.enabled) return 'The memory index is off, so facts cannot be changed now; nothing was changed.';
  await deps.index.whenWritable();
  const newId = deps.index.correctFact(id, deps.memory.scopeKey(ctx.inbound.channel, ctx.inbound.chatId), content);
  if (!newId) return `${id} is no longer a current fact (already corrected or forgotten); nothing was changed.`;
  // The replacement needs a vector like any new fact, or vector search finds only the old words.
  deps.embedder?.enqueue(newId, content);
  return `✏️ Corrected: ${id} is kept as history, and “${content}” is saved as ${newId}.`;
}

export function createWhyCommand(deps: WhyCommandDeps): Command {
  return {
    name: 'why',
    description: 'What my last answer (or the one you reply to) was built from, with buttons to forget or correct each item',
    // Like /memory: the list shows the chat's memory word for word (in a group, the group's).
    access: 'managers',
    async run(ctx) {
      const [, sub, turn, n, correction] = /^(\S*)\s*(\S*)\s*(\S*)\s*([\s\S]*)$/.exec(ctx.args.trim()) ?? [];
      if (sub === 'forget') return forgetItem(deps, ctx, turn, n);
      if (sub === 'correct') return correctItem(deps, ctx, turn, n, correction);
      const chat = chatKey(ctx.inbound);
      const record = ctx.inbound.replyTo ? await deps.store.find(chat, { sent: ctx.inbound.replyTo }) : await deps.store.last(chat);
      if (!record)
        return ctx.inbound.replyTo ? NO_RECORD : 'I have not answered anything in this chat yet that I keep a record of. Ask me something, then send /why.';
      const { text, rows } = listing(record, ctx.buttons !== undefined);
      if (rows.length > 0) ctx.buttons?.(rows);
      return text;
    },
  };
}
