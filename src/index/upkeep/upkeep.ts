/**
 * The nightly upkeep of the index (seed 003 "memory_maintenance" and "memory_reflection").
 * Every job is idempotent: run twice in a row, the second run changes nothing.
 *   enrichment    re-extract entities with an accurate NER — skipped: none is configured here
 *   consolidation facts from sessions the user has left (not the newest of their scope)
 *   decay         Ebbinghaus: confidence = base × e^(−rate × days since access); < 0.05 → soft delete
 *   reflection    weekly insight from ≥ 3 facts of the last 7 days, at most once per 6 days
 */
import type { LlmClient } from '../../llm/client.js';
import type { Logger } from '../../core/log.js';
import type { IndexJobs, MemoryIndex } from '../memory-index.js';
import { balancedEnd } from '../../memory/consolidation.js';
import { errorMessage } from '../../core/errors.js';
import { withoutCorrected } from '../search/superseded.js';

export const JOB_NAMES = ['enrichment', 'consolidation', 'decay', 'reflection'] as const;
export type JobName = (typeof JOB_NAMES)[number];

export const DECAY_THRESHOLD = 0.05;
const DAY = 86_400;
const CHUNK = 30;

export interface JobResult {
  job: JobName;
  skipped?: string;
  changed: number;
  detail: string;
}

export function parseFacts(text: string): string[] {
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    const end = balancedEnd(text, start);
    if (end < 0) break;
    try {
      const o = JSON.parse(text.slice(start, end)) as { facts?: unknown };
      if (Array.isArray(o.facts)) return o.facts.filter((f): f is string => typeof f === 'string' && f.trim() !== '');
    } catch {
      /* try the next block */
    }
  }
  return [];
}

export class Upkeep {
  constructor(
    private readonly index: MemoryIndex,
    private readonly llm: LlmClient,
    private readonly log: Logger,
    private readonly opts: { accurateNer: boolean; timeoutMs: number; paused?: (scope: string) => boolean | Promise<boolean> } = {
      accurateNer: false,
      timeoutMs: 30_000,
    },
  ) {}

  async run(job: JobName, now = new Date()): Promise<JobResult> {
    // Not on top of a scrub after /forget: its VACUUM holds the write lock (scrubber.ts).
    await this.index.whenWritable();
    const tables = this.index.jobs;
    if (!tables) return { job, skipped: `the index is off (${this.index.disabledReason})`, changed: 0, detail: '' };
    const started = Date.now();
    const run = tables.startRun(job, Math.floor(started / 1000));
    let result: JobResult;
    try {
      result =
        job === 'enrichment'
          ? this.enrichment()
          : job === 'consolidation'
            ? await this.consolidation(tables)
            : job === 'decay'
              ? this.decay(tables, now)
              : await this.reflection(tables, now);
    } catch (err) {
      result = { job, changed: 0, detail: `failed: ${errorMessage(err)}` };
    }
    try {
      await this.index.whenWritable();
      tables.finishRun(
        run,
        Math.floor(Date.now() / 1000),
        result.skipped ? 'skipped' : result.detail.startsWith('failed') ? 'failed' : 'ok',
        result.skipped ?? result.detail,
      );
    } catch (err) {
      this.log.warn({ job, err: errorMessage(err) }, 'the run could not be recorded in memory.db');
    }
    this.log.info(
      { job, ms: Date.now() - started, changed: result.changed, skipped: result.skipped },
      `${job}: ${result.skipped ? `skipped (${result.skipped})` : result.detail}`,
    );
    return result;
  }

  private enrichment(): JobResult {
    if (!this.opts.accurateNer) return { job: 'enrichment', skipped: 'no accurate NER (spaCy or LLM) is configured', changed: 0, detail: '' };
    return { job: 'enrichment', changed: 0, detail: 'nothing to enrich' };
  }

  private async consolidation(tables: IndexJobs): Promise<JobResult> {
    // Pending: not consolidated and not the newest session of its scope (the user has left it).
    const pending = tables.pendingConsolidations();
    let facts = 0;
    let done = 0;
    for (const p of pending) {
      // A chat over its daily token budget: left for a later night (it stays pending).
      if (await this.opts.paused?.(p.scope)) continue;
      const episodes = tables.sessionEpisodes(p.session_id);
      let ok = true;
      for (let i = 0; i < episodes.length; i += CHUNK) {
        const chunk = episodes.slice(i, i + CHUNK);
        try {
          const res = await this.llm.chat({
            tier: 'balanced',
            messages: [
              {
                role: 'user',
                content: `Extract durable facts about the user from this conversation (names, preferences, plans, relationships, decisions). Return only JSON {"facts": ["one short standalone sentence each"]}; [] if none.\n\n${chunk.map((e) => `${e.source_role === 'user' ? 'USER' : 'ASSISTANT'}: ${e.content.slice(0, 1000)}`).join('\n')}`,
              },
            ],
            temperature: 0.2,
            timeoutMs: this.opts.timeoutMs,
            retries: 1,
            account: { chat: p.scope, kind: 'facts' },
          });
          await this.index.whenWritable();
          // Not a value a correction replaced since these messages were said (superseded.ts).
          const { kept } = withoutCorrected(parseFacts(res.content), this.index.corrections(p.scope));
          const saved = this.index.saveFacts(kept.map((content) => ({ content, scope: p.scope, sessionId: p.session_id, sourceIds: chunk.map((c) => c.id) })));
          facts += saved.filter((s) => !s.duplicateOf).length;
        } catch (err) {
          ok = false;
          this.log.warn({ session: p.session_id, err: errorMessage(err) }, 'consolidation of a session failed; it stays pending for the next run');
          break;
        }
      }
      if (ok) {
        await this.index.whenWritable();
        tables.setConsolidated(p.session_id, Math.floor(Date.now() / 1000));
        done++;
      }
    }
    return { job: 'consolidation', changed: done, detail: `${done} of ${pending.length} pending sessions consolidated, ${facts} new facts` };
  }

  private decay(tables: IndexJobs, now: Date): JobResult {
    const { checked, updated, deleted } = tables.decay(Math.floor(now.getTime() / 1000), DECAY_THRESHOLD);
    return {
      job: 'decay',
      changed: updated + deleted,
      detail: `${checked} facts checked, ${updated} decayed, ${deleted} below ${DECAY_THRESHOLD} soft-deleted`,
    };
  }

  private async reflection(tables: IndexJobs, now: Date): Promise<JobResult> {
    const t = Math.floor(now.getTime() / 1000);
    const scopes = tables.scopesWithFactsSince(t - 7 * DAY);
    let made = 0;
    const notes: string[] = [];
    for (const scope of scopes) {
      if (await this.opts.paused?.(scope)) {
        notes.push(`${scope}: daily token budget used up`);
        continue;
      }
      const last = tables.lastReflectionAt(scope);
      if (last !== null && t - last < 6 * DAY) {
        notes.push(`${scope}: last reflection less than 6 days ago`);
        continue;
      }
      const facts = tables.factsSince(scope, t - 7 * DAY);
      if (facts.length < 3) {
        notes.push(`${scope}: ${facts.length} facts this week (needs 3)`);
        continue;
      }
      const res = await this.llm.chat({
        tier: 'balanced',
        messages: [
          {
            role: 'user',
            content: `Write a short weekly reflection (3-5 sentences) on what matters to the user this week, from these facts:\n${facts.map((f) => `- ${f.content}`).join('\n')}`,
          },
        ],
        temperature: 0.3,
        maxTokens: 300,
        timeoutMs: this.opts.timeoutMs,
        retries: 1,
        account: { chat: scope, kind: 'reflection' },
      });
      if (res.content.trim()) {
        await this.index.whenWritable();
        if (
          this.index.saveReflection(
            res.content.trim(),
            scope,
            facts.map((f) => f.id),
          )
        )
          made++;
      }
    }
    return { job: 'reflection', changed: made, detail: `${made} reflection(s) written${notes.length ? `; ${notes.join('; ')}` : ''}` };
  }
}
