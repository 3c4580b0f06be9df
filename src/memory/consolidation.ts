/**
 * Consolidation (seed 002): before messages leave the session, one LLM call turns them into a
 * history entry and an updated MEMORY.md. Jobs run one at a time (a queue), so MEMORY.md is
 * never rewritten by two consolidations at once. Whatever the model does — timeout, error,
 * prose instead of JSON — the messages still reach HISTORY as a `[raw-fallback]` entry, which
 * needs no cooperation from the model.
 */
import { format } from 'date-fns';
import { TZDate } from '@date-fns/tz';
import type { LlmClient } from '../llm/client.js';
import type { Logger } from '../core/log.js';
import { reminderNote, type SessionMessage } from '../sessions/model.js';
import type { MemoryFiles } from './files.js';
import { cutChars } from './notes.js';
import { errorMessage, isAppError } from '../core/errors.js';
import { withNewline } from './files.js';
import { guardedMemoryWrite, MAX_DROP, MAX_DROP_COMPRESSION } from './guard.js';
import { collapseLineBreaks } from '../core/text.js';

export interface ConsolidationResult {
  historyEntry?: string;
  memoryUpdate?: string;
  facts?: string[];
}

/** Where facts extracted by a consolidation go (the SQLite index), with the chat they came from. */
export type FactsSink = (facts: string[], ctx: { scope: string; sessionId: string }) => void | Promise<void>;
/** Where a consolidation comes from: memory scope and conversation; `chat` (session key) is billed for it (else the scope). */
export interface ConsolidationContext {
  scope: string;
  sessionId: string;
  chat?: string | undefined;
  /**
   * The messages leave for good (/new): a fallback keeps every user and assistant message whole,
   * not only the last ones cut short, so "nothing was lost" holds.
   */
  keepAll?: boolean;
}

export interface ConsolidationOutcome {
  kind: 'llm' | 'raw-fallback';
  historyWritten: boolean;
  memoryUpdated: boolean;
  /** The memory_update was refused by the rewrite guard (guard.ts): it dropped too many entries. */
  memoryRefused?: boolean;
  reason?: string;
}

export interface ConsolidationOptions {
  timeoutMs: number;
  maxMemorySize: number;
  timezone: string;
}

const MAX_PROMPT_CHARS_PER_MESSAGE = 1_500;
const RAW_FALLBACK_MESSAGES = 10;
const RAW_FALLBACK_CHARS = 200;

function stamp(iso: string, tz: string): string {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? format(new TZDate(t, tz), 'yyyy-MM-dd HH:mm') : '????-??-?? ??:??';
}

export function formatForPrompt(messages: SessionMessage[], tz: string): string {
  return messages
    .map((m) => {
      const calls = m.toolCalls?.length ? ` [called ${m.toolCalls.map((c) => c.name).join(', ')}]` : '';
      const max = m.role === 'tool' ? 300 : MAX_PROMPT_CHARS_PER_MESSAGE;
      // A delivered reminder is a user's text, not the assistant's: a note, quoted (sessions/model.ts).
      if (m.reminder !== undefined) return `[${stamp(m.timestamp, tz)}] NOTE: ${reminderNote({ content: cutChars(m.content, max) })}`;
      const who = m.role === 'tool' ? `TOOL(${m.toolName ?? '?'})` : m.role.toUpperCase();
      return `[${stamp(m.timestamp, tz)}] ${who}: ${cutChars(m.content, max)}${calls}`;
    })
    .join('\n');
}

export function buildConsolidationPrompt(messages: SessionMessage[], currentMemory: string, opts: ConsolidationOptions): string {
  const parts = [
    'You are a memory consolidation agent. Return only a JSON object with:',
    '  "history_entry": a summary paragraph of the conversation below, starting with its [YYYY-MM-DD HH:MM] timestamp',
    '  "memory_update": the full updated long-term memory (markdown): the current memory plus durable facts from the conversation (preferences, names, projects, decisions); unchanged if nothing new',
    '  "facts": a list of short standalone sentences, one durable fact about the user each (e.g. "The user\'s cat is called Miso."); [] if none',
    '',
    '## Current Long-term Memory',
    currentMemory.trim() || '(empty)',
    '',
    '## Conversation to Process',
    formatForPrompt(messages, opts.timezone),
  ];
  if (Buffer.byteLength(currentMemory, 'utf8') > opts.maxMemorySize) {
    parts.push(
      '',
      `The long-term memory is over ${opts.maxMemorySize} bytes. In "memory_update", compress it: merge duplicates, drop stale or low-value facts, keep it under ${opts.maxMemorySize} bytes.`,
    );
  }
  return parts.join('\n');
}

/** Index just past the `{…}` block starting at `start`, honouring strings; -1 if unbalanced. */
export function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
  }
  return -1;
}

function fromObject(v: unknown): ConsolidationResult | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const out: ConsolidationResult = {};
  if (typeof o.history_entry === 'string') out.historyEntry = o.history_entry;
  if (typeof o.memory_update === 'string') out.memoryUpdate = o.memory_update;
  if (Array.isArray(o.facts)) out.facts = o.facts.filter((f): f is string => typeof f === 'string' && f.trim() !== '');
  return out.historyEntry !== undefined || out.memoryUpdate !== undefined ? out : null;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const MAX_BLOCK_TRIES = 16;

/**
 * The answer without a Markdown code fence around it. Not /\s*```\s*$/: that regex retries from
 * every position of a long run of spaces (quadratic on a hostile or broken answer).
 */
function unfence(text: string): string {
  let t = text.trim().replace(/^```(?:json)?\s*/i, '');
  if (t.endsWith('```')) t = t.slice(0, -3).trimEnd();
  return t;
}

/**
 * Three tiers, as models do not always return clean JSON: (1) the text, fences stripped, as
 * JSON; (2) the first balanced `{…}` block; (3) each field pulled out by a regex.
 */
export function parseConsolidation(text: string): ConsolidationResult | null {
  const t1 = fromObject(tryJson(unfence(text)));
  if (t1) return t1;
  // Each try parses up to the rest of the answer: a bounded number keeps a hostile answer
  // ("{{{{…" nested 100,000 deep) from costing a parse per brace.
  let tries = 0;
  for (let start = text.indexOf('{'); start >= 0 && tries < MAX_BLOCK_TRIES; start = text.indexOf('{', start + 1), tries++) {
    const end = balancedEnd(text, start);
    if (end < 0) break;
    const t2 = fromObject(tryJson(text.slice(start, end)));
    if (t2) return t2;
  }
  const out: ConsolidationResult = {};
  for (const [field, key] of [
    ['history_entry', 'historyEntry'],
    ['memory_update', 'memoryUpdate'],
  ] as const) {
    const m = new RegExp(`"${field}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`, 's').exec(text);
    if (m) {
      const v = tryJson(`"${m[1]}"`);
      out[key] = typeof v === 'string' ? v : m[1]!;
    }
  }
  return out.historyEntry !== undefined || out.memoryUpdate !== undefined ? out : null;
}

export function rawFallbackEntry(messages: SessionMessage[], reason: string, tz: string, keepAll = false): string {
  const kept = keepAll ? messages.filter((m) => m.role === 'user' || m.role === 'assistant') : messages.slice(-RAW_FALLBACK_MESSAGES);
  const lines = kept.map(
    (m) =>
      `- [${stamp(m.timestamp, tz)}] ${m.reminder !== undefined ? 'reminder (set by a user)' : m.role}: ${collapseLineBreaks(keepAll ? m.content : cutChars(m.content, RAW_FALLBACK_CHARS))}`,
  );
  const what = keepAll ? `All ${kept.length} user and assistant messages of ${messages.length}` : `Last ${kept.length} of ${messages.length} messages`;
  return [`[raw-fallback] Consolidation failed (${reason}). ${what}:`, ...lines].join('\n');
}

export class ConsolidationService {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly llm: LlmClient,
    private readonly opts: ConsolidationOptions,
    private readonly log: Logger,
    private readonly factsSink?: FactsSink,
  ) {}

  /** Queued behind any running consolidation; never rejects unless even the fallback write fails. */
  consolidate(messages: SessionMessage[], files: MemoryFiles, ctx?: ConsolidationContext): Promise<ConsolidationOutcome> {
    const job = this.tail.then(() => this.run(messages, files, ctx));
    this.tail = job.catch(() => undefined);
    return job;
  }

  private async run(messages: SessionMessage[], files: MemoryFiles, ctx?: ConsolidationContext): Promise<ConsolidationOutcome> {
    let reason: string;
    let detail: string | undefined;
    try {
      const current = await files.readMemory();
      const res = await this.llm.chat({
        tier: 'balanced',
        messages: [{ role: 'user', content: buildConsolidationPrompt(messages, current, this.opts) }],
        temperature: 0.2,
        timeoutMs: this.opts.timeoutMs,
        retries: 0,
        account: { chat: ctx?.chat ?? ctx?.scope ?? '*', kind: 'consolidation' },
      });
      const parsed = parseConsolidation(res.content);
      if (parsed) {
        let historyWritten = false;
        let memoryUpdated = false;
        if (parsed.historyEntry?.trim()) {
          await files.appendHistory(parsed.historyEntry);
          historyWritten = true;
        }
        const update = parsed.memoryUpdate?.trim();
        let memoryRefused = false;
        // An empty update means "nothing to add", never "erase the memory". A rewrite that
        // drops too many entries is refused (the file stays; the history entry is still kept).
        if (update && update !== current.trim()) {
          const compress = Buffer.byteLength(current, 'utf8') > this.opts.maxMemorySize;
          const res = await guardedMemoryWrite(files, {
            source: compress ? 'compression' : 'consolidation',
            maxDrop: compress ? MAX_DROP_COMPRESSION : MAX_DROP,
            log: this.log,
            next: () => withNewline(update),
            ...(ctx ? { scope: ctx.scope } : {}),
          });
          memoryUpdated = res.written;
          memoryRefused = res.refused !== undefined;
        }
        if (!historyWritten) {
          // The model gave memory but no history: keep the raw words in history anyway.
          await files.appendHistory(rawFallbackEntry(messages, 'no history_entry in the answer', this.opts.timezone, ctx?.keepAll));
          historyWritten = true;
        }
        if (parsed.facts?.length && ctx && this.factsSink) {
          try {
            await this.factsSink(parsed.facts, ctx);
          } catch (err) {
            this.log.warn({ err: errorMessage(err) }, 'facts could not be saved to the index');
          }
        }
        this.log.info({ messages: messages.length, memoryUpdated, facts: parsed.facts?.length ?? 0 }, `consolidated ${messages.length} messages`);
        return { kind: 'llm', historyWritten, memoryUpdated, ...(memoryRefused ? { memoryRefused } : {}) };
      }
      reason = 'the answer was not JSON with history_entry/memory_update';
    } catch (err) {
      // HISTORY.md is read back to the chat (notes_read, notes_search): it gets the stable code,
      // the provider's text (which may echo a key) stays in the log, where it is scrubbed.
      reason = isAppError(err) ? err.code : 'unexpected error';
      detail = errorMessage(err);
    }
    this.log.warn({ messages: messages.length, reason, ...(detail ? { err: detail } : {}) }, 'failed; writing a [raw-fallback] history entry');
    await files.appendHistory(rawFallbackEntry(messages, reason, this.opts.timezone, ctx?.keepAll));
    return { kind: 'raw-fallback', historyWritten: true, memoryUpdated: false, reason };
  }
}
