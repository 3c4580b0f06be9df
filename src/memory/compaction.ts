/**
 * Compaction of one session, in the order the design gives:
 *   1. consolidate the messages that will leave the session into HISTORY and MEMORY.md;
 *   2. summarize them (balanced model, temperature 0.3, ≤ 500 tokens, 15 s) into one
 *      `[Conversation summary]` system message at the start, followed by the kept tail.
 * Without a summary (LLM down, timeout, empty answer) it truncates instead: exchanges are
 * dropped by importance (seed 004) and a marker `[N earlier messages removed — kept in memory]`
 * takes their place.
 *
 * Invariants: system messages are never dropped (earlier summaries are folded into the new
 * one); a tool result never loses the assistant message that called it; the result is a
 * valid chat request; every LLM call has a timeout, so compaction ends in bounded time.
 */
import type { LlmClient } from '../llm/client.js';
import type { Logger } from '../core/log.js';
import { makeMessage, type SessionMessage } from '../sessions/model.js';
import type { SessionWriter } from '../sessions/writer.js';
import { tailStart } from '../sessions/integrity.js';
import type { MemoryFiles } from './files.js';
import type { ConsolidationOutcome, ConsolidationService } from './consolidation.js';
import { formatForPrompt } from './consolidation.js';
import { buildUnits, chooseDrops } from './importance.js';
import { conversationNoteBodies, noteKey } from './context.js';
import { errorMessage } from '../core/errors.js';

/** The first line of the system message a summary compaction leaves at the start of the session. */
export const SUMMARY_PREFIX = '[Conversation summary]';

export const MARKER_RE = /^\[(\d+) earlier messages? removed — kept in memory\]$/;

export function markerText(n: number): string {
  return `[${n} earlier message${n === 1 ? '' : 's'} removed — kept in memory]`;
}

export function isSummary(m: SessionMessage): boolean {
  return m.role === 'system' && m.content.startsWith(SUMMARY_PREFIX);
}

export function isMarker(m: SessionMessage): boolean {
  return m.role === 'system' && MARKER_RE.test(m.content);
}

export interface CompactRequest {
  keepLast: number;
  /** For truncation: the request must count at most this many tokens (Infinity: drop every unprotected exchange). */
  targetTokens: number;
  /** Tokens of one message as sent (content + framing). */
  countMessage: (m: SessionMessage) => number;
  /** Tokens of the request besides the messages (system prompt, tools, reply priming). */
  fixedTokens: number;
  reason: 'auto' | 'hard' | 'manual' | 'overflow';
  /** The chat's memory scope, for facts the consolidation extracts. */
  scope: string;
}

export interface CompactResult {
  kind: 'summary' | 'truncation' | 'none';
  removed: number;
  kept: number;
  consolidation: ConsolidationOutcome | null;
}

export interface CompactionOptions {
  summaryTimeoutMs: number;
  summaryMaxTokens: number;
  timezone: string;
}

/** The line added to the reply when a turn compacted its session. */
export function compactionNotice(r: CompactResult): string {
  if (r.kind === 'summary') {
    const mem = r.consolidation?.memoryUpdated ? 'memory updated' : r.consolidation?.kind === 'raw-fallback' ? 'saved to history' : 'history updated';
    return `Compacted the conversation: ${r.removed} messages summarized, ${mem}`;
  }
  return `Compacted the conversation: ${r.removed} older messages removed (a summary was not available; they are kept in the history log)`;
}

const SUMMARY_INPUT_CHARS = 300;
const MARKER_TOKENS = 20;
const SUMMARY_INPUT_BUDGET_CHARS = 40_000;
/**
 * Keys of summarized exchanges a summary keeps (newest): ~11 bytes each in the session file.
 * Far more exchanges than the `# Memory` budget shows lines of; past it the oldest lines of a
 * very long conversation may show again, which costs tokens, never context.
 */
const MAX_COVERED = 4_000;

export class CompactionService {
  constructor(
    private readonly llm: LlmClient,
    private readonly consolidation: ConsolidationService,
    private readonly opts: CompactionOptions,
    private readonly log: Logger,
  ) {}

  /** Compacts the writer's session; the new message list is written through it (and saved now). */
  async compact(writes: SessionWriter, files: MemoryFiles, req: CompactRequest): Promise<CompactResult> {
    const session = writes.session;
    // A copy: the summary takes seconds, and a /stop meanwhile adds its marker to the session
    // (kept by `replace`, which is told what this compaction worked from).
    const all = session.messages.slice();
    const start = tailStart(all, req.keepLast);
    const old = all.slice(0, start);
    const tail = all.slice(start);
    const removable = old.filter((m) => m.role !== 'system');
    if (removable.length === 0) return { kind: 'none', removed: 0, kept: all.length, consolidation: null };

    const keptSystem = old.filter((m) => m.role === 'system' && !isSummary(m) && !isMarker(m));
    const summaries = old.filter(isSummary);
    const earlierMarked = old.filter(isMarker).reduce((n, m) => n + Number(MARKER_RE.exec(m.content)![1]), 0);

    // Consolidate first, as the design orders. Messages an earlier truncation already
    // consolidated (and kept) are not sent again, so history gets each message once.
    const fresh = removable.filter((m) => !m.consolidated);
    const consolidation =
      fresh.length > 0
        ? await this.consolidation.consolidate(fresh, files, { scope: req.scope, sessionId: session.metadata.conversationId, chat: session.id })
        : null;
    const summary = await this.summarize(summaries, removable, session.id);

    let next: SessionMessage[];
    let kind: 'summary' | 'truncation';
    let removed: number;
    if (summary !== null) {
      kind = 'summary';
      removed = removable.length;
      // The exchanges the summary now stands for: earlier summaries' and every answered one not
      // whole in the kept tail (an exchange whose question left and whose answer stayed counts:
      // the summary has its question).
      const inTail = conversationNoteBodies(tail);
      const replaced = [...conversationNoteBodies(all)].filter((b) => !inTail.has(b)).map(noteKey);
      const covers = [...new Set([...summaries.flatMap((m) => m.covers ?? []), ...replaced])].slice(-MAX_COVERED);
      next = [...keptSystem, makeMessage('system', `${SUMMARY_PREFIX}\n${summary}`, covers.length > 0 ? { covers } : {}), ...tail];
    } else {
      kind = 'truncation';
      const units = buildUnits(old);
      const perMessage = old.map((m) => req.countMessage(m));
      const total = req.fixedTokens + [...old, ...tail].reduce((n, m, i) => n + (i < old.length ? perMessage[i]! : req.countMessage(m)), 0);
      // With no token target (manual /compact) every unprotected exchange goes; with one, only as
      // many as needed, and protected ones too if nothing else would make it fit.
      const bounded = Number.isFinite(req.targetTokens);
      const excess = bounded ? total + MARKER_TOKENS - req.targetTokens : Infinity;
      const dropped = chooseDrops(units, (u) => u.indices.reduce((n, i) => n + perMessage[i]!, 0), excess, bounded);
      // Survivors were consolidated above too: flag them so a later compaction does not repeat it.
      const survivors = old.filter((m, i) => !dropped.has(i) && m.role !== 'system').map((m) => ({ ...m, consolidated: true }));
      const n = earlierMarked + dropped.size;
      removed = dropped.size;
      next = [...keptSystem, ...summaries, ...(n > 0 ? [makeMessage('system', markerText(n))] : []), ...survivors, ...tail];
    }
    await writes.replace(next, { at: new Date().toISOString(), kind, removed, kept: tail.length }, all);
    if (kind === 'summary') {
      this.log.info({ session: session.id, reason: req.reason }, `Compacted with LLM summary: removed ${removed} messages, kept ${tail.length}`);
    } else {
      this.log.warn({ session: session.id, reason: req.reason }, `No summary available; truncated: removed ${removed} messages, kept ${next.length}`);
    }
    return { kind, removed, kept: tail.length, consolidation };
  }

  /** The summary text, or null when the LLM could not give one (the caller truncates). */
  private async summarize(previous: SessionMessage[], messages: SessionMessage[], chat: string): Promise<string | null> {
    // Tool results are noise for a summary; each message is cut to 300 characters, newest kept
    // first when the whole would be too long for one request.
    const chosen: SessionMessage[] = [];
    let chars = 0;
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!;
      if (m.role === 'tool') continue;
      chars += Math.min(m.content.length, SUMMARY_INPUT_CHARS) + 30;
      if (chars > SUMMARY_INPUT_BUDGET_CHARS) break;
      chosen.unshift({ ...m, content: m.content.slice(0, SUMMARY_INPUT_CHARS) });
    }
    const prior = previous.map((m) => m.content.slice(SUMMARY_PREFIX.length).trim()).filter(Boolean);
    const prompt = [
      'Summarize the conversation below for the assistant that will continue it. Keep facts, names, numbers, decisions, preferences and open tasks; drop small talk. Write at most 200 words, as short bullet points.',
      ...(prior.length ? ['', 'Summary of what came before:', ...prior] : []),
      '',
      'Conversation:',
      formatForPrompt(chosen, this.opts.timezone),
    ].join('\n');
    try {
      const res = await this.llm.chat({
        tier: 'balanced',
        messages: [{ role: 'user', content: prompt }],
        temperature: 0.3,
        maxTokens: this.opts.summaryMaxTokens,
        timeoutMs: this.opts.summaryTimeoutMs,
        retries: 0,
        account: { chat, kind: 'summary' },
      });
      const text = res.content.trim();
      return text ? text : null;
    } catch (err) {
      this.log.warn({ err: errorMessage(err) }, 'summary failed; truncating instead');
      return null;
    }
  }
}
