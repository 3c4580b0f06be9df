/**
 * The chat's facts for /memory: the sentences the model saved with remember_fact (and those a
 * consolidation took from the conversation), kept in memory.db, not in MEMORY.md — without this
 * they were seen from Telegram only through /export. `/memory` shows the newest that fit beside
 * MEMORY.md in one Telegram message; `/memory facts [N]` lists every live one, part by part.
 */
import type { CommandContext } from '../../turn/command.js';
import type { MemoryService } from '../../memory/service.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { PendingApprovals } from './pending.js';

/** What /memory reads: the chat's memory files and its facts in memory.db. */
export interface MemoryDeps {
  memory: MemoryService;
  index: Pick<MemoryIndex, 'browse' | 'disabledReason'>;
  /** Writes held for the owner's approval (`/memory pending`). */
  pending?: PendingApprovals | undefined;
}
import { clipText, collapseLineBreaks } from '../../core/text.js';

/** A part of the full list: one Telegram message with room for its header. */
const PART_CHARS = 3_500;
/** Facts read for a listing at most (newest first). */
const MAX_LISTED = 5_000;
/** A fact longer than this is cut in the overview beside MEMORY.md (the listing shows it whole). */
const OVERVIEW_FACT_CHARS = 300;

/** The chat's live facts, newest first, as one line each; or why they cannot be read. */
function liveFacts({ memory, index }: MemoryDeps, { inbound, log }: CommandContext, max: number): string[] | { problem: string } {
  const browse = index.browse;
  if (!browse) return { problem: `the memory index is off (${index.disabledReason ?? 'unavailable'})` };
  try {
    const scope = memory.scopeKey(inbound.channel, inbound.chatId);
    // Live ones come first, so the first `max` rows hold every live fact up to `max`.
    return browse
      .facts(scope, max)
      .filter((f) => f.retired === null)
      .map((f) => `- ${collapseLineBreaks(f.content).trim()}`);
  } catch (err) {
    log.warn({ err }, '/memory could not read the facts');
    return { problem: 'the memory index could not be read just now; try again in a minute' };
  }
}

const count = (n: number) => `${n.toLocaleString('en-US')} fact${n === 1 ? '' : 's'}`;

/**
 * The facts block under MEMORY.md in `/memory`, at most `room` characters: the newest facts that
 * fit and, when some do not, how to see them all. Always at least one line.
 */
export function factsOverview(deps: MemoryDeps, ctx: CommandContext, room: number): string {
  const facts = liveFacts(deps, ctx, MAX_LISTED);
  if ('problem' in facts) return `📌 Facts: ${facts.problem}.`;
  if (facts.length === 0) return '📌 Facts: none saved yet.';
  const head = `📌 Facts (${count(facts.length)}${facts.length >= MAX_LISTED ? ' or more' : ''}, newest first):`;
  const more = (n: number) => `… ${count(n)} more: /memory facts lists them all.`;
  const shown: string[] = [];
  let used = head.length;
  for (const [i, line] of facts.map((f) => clipText(f, OVERVIEW_FACT_CHARS)).entries()) {
    const left = facts.length - i - 1;
    // The line, and the "more" line after it unless it is the last one.
    if (used + 1 + line.length + (left > 0 ? 1 + more(left).length : 0) > room) break;
    shown.push(line);
    used += 1 + line.length;
  }
  if (shown.length === 0) return `📌 Facts: ${count(facts.length)} saved; /memory facts lists them.`;
  const rest = facts.length - shown.length;
  return [head, ...shown, ...(rest > 0 ? [more(rest)] : [])].join('\n');
}

/** `/memory facts [N]`: every live fact, in parts of about 3,500 characters (whole lines). */
export function listFacts(deps: MemoryDeps, ctx: CommandContext, page: string): string {
  const wanted = page === '' ? 1 : Number(page);
  if (!Number.isInteger(wanted) || wanted < 1) return `"/memory facts ${page}" — give a part number, e.g. /memory facts 2.`;
  const facts = liveFacts(deps, ctx, MAX_LISTED);
  if ('problem' in facts) return `📌 Facts cannot be shown: ${facts.problem}.`;
  if (facts.length === 0) return '📌 No facts saved yet. When you tell me something worth keeping, I save it as a fact.';
  const parts: string[][] = [[]];
  let size = 0;
  for (const line of facts.map((f) => clipText(f, PART_CHARS))) {
    if (size + line.length + 1 > PART_CHARS && parts.at(-1)!.length > 0) {
      parts.push([]);
      size = 0;
    }
    parts.at(-1)!.push(line);
    size += line.length + 1;
  }
  if (wanted > parts.length) return `The facts fill ${parts.length} part${parts.length === 1 ? '' : 's'}; send /memory facts ${parts.length} for the last one.`;
  const total = `${count(facts.length)}${facts.length >= MAX_LISTED ? ' (the newest)' : ''}`;
  const head = parts.length === 1 ? `📌 Facts (${total}, newest first):` : `📌 Facts (${total}, newest first), part ${wanted} of ${parts.length}:`;
  const next = wanted < parts.length ? `\n\n(Send /memory facts ${wanted + 1} for the next part.)` : '';
  return `${head}\n${parts[wanted - 1]!.join('\n')}${next}`;
}
