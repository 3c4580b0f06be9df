/**
 * Optional embeddings (EMBEDDINGS_MODEL): computed off the hot path in batches, cached by
 * content hash, stored in a sqlite-vec `vec0` table locked to EMBEDDINGS_DIMENSIONS. A
 * dimension change is caught at start: vector search turns off with a warning saying how to
 * rebuild (seed 003). Without a model, nothing here runs and search is FTS + entities.
 */
import type { LlmClient } from '../../llm/client.js';
import type { Logger } from '../../core/log.js';
import type { MemoryIndex } from '../memory-index.js';
import { errorMessage } from '../../core/errors.js';
import { contentHash } from '../store/vectors.js';

const BATCH = 32;
const FLUSH_MS = 500;
const QUERY_TIMEOUT_MS = 3_000;

export class Embedder {
  private queue: Array<{ id: string; content: string }> = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  active = false;

  constructor(
    private readonly llm: LlmClient,
    private readonly index: MemoryIndex,
    readonly model: string,
    readonly dims: number,
    private readonly log: Logger,
  ) {}

  /** Creates or checks the vec0 table; turns vector search on only when everything matches. */
  init(): void {
    const vectors = this.index.vectors;
    if (!vectors) return;
    if (!this.index.vecLoaded) {
      this.log.warn('EMBEDDINGS_MODEL is set but sqlite-vec could not be loaded; vector search is off (full-text and entity search still work)');
      return;
    }
    const stored = this.index.meta('embedding_dimensions');
    if (stored && Number(stored) !== this.dims) {
      this.log.warn(
        { stored: Number(stored), configured: this.dims },
        `memory.db holds ${stored}-dimension vectors but EMBEDDINGS_DIMENSIONS is ${this.dims}; vector search is off. To rebuild: npm run memory -- reindex --embeddings`,
      );
      return;
    }
    vectors.create(this.dims);
    const layout = vectors.layout();
    if (layout.metric === 'l2' || !layout.partitioned) {
      this.log.info(
        { metric: layout.metric, perChat: layout.partitioned },
        "memory.db's vector table is an older kind (L2 distance, one list for all chats); it works (similarities assume unit-length vectors, as OpenAI's are), and `npm run memory -- reindex --embeddings` rebuilds it with cosine and one partition per chat (cached texts are not embedded again)",
      );
    }
    this.index.setMeta('embedding_dimensions', String(this.dims));
    this.index.setMeta('embedding_model', this.model);
    this.active = true;
    this.index.vectorsOn = true;
  }

  /** Drops and recreates the vector table at the configured size (reindex --embeddings). */
  reset(): void {
    const vectors = this.index.vectors;
    if (!vectors || !this.index.vecLoaded) return;
    vectors.drop();
    this.index.setMeta('embedding_dimensions', String(this.dims));
    this.init();
  }

  enqueue(id: string, content: string): void {
    if (!this.active) return;
    this.queue.push({ id, content });
    if (this.queue.length >= BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Embeds everything queued, in batches; failures are logged and the items dropped (search still has FTS). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.queue.splice(0);
    if (items.length === 0) return this.running;
    // A failure here (the database closed or busy, a vector table dropped behind our back) is
    // logged and ends with this batch: left in the chain it would skip every later batch, and
    // `void this.flush()` would leave an unhandled rejection, which ends the process.
    this.running = this.running
      .then(async () => {
        for (let i = 0; i < items.length; i += BATCH) await this.embedBatch(items.slice(i, i + BATCH));
      })
      .catch((err: unknown) => {
        this.log.warn({ err: errorMessage(err), items: items.length }, 'storing embeddings failed; those memories are searchable by text only');
      });
    return this.running;
  }

  private async embedBatch(items: Array<{ id: string; content: string }>): Promise<void> {
    const tables = this.index.vectors;
    if (!tables) return;
    const hashed = items.map((it) => ({ ...it, hash: contentHash(it.content) }));
    const vectors = tables.cached([...new Set(hashed.map((it) => it.hash))], this.model, this.dims);
    const missing: Array<{ hash: string; content: string }> = [];
    for (const it of hashed) if (!vectors.has(it.hash) && !missing.some((m) => m.hash === it.hash)) missing.push(it);
    if (missing.length > 0) {
      try {
        const out = await this.llm.embed(
          this.model,
          missing.map((m) => m.content),
          this.dims,
        );
        // A scrub after /forget holds the index's writes (scrubber.ts): wait for it, not for the lock.
        await this.index.whenWritable();
        // A memory forgotten while its text was being embedded leaves no vector of it behind,
        // neither in the cache nor in the vector table.
        const alive = tables.existing(hashed.map((it) => it.id));
        const kept = new Set(hashed.filter((it) => alive.has(it.id)).map((it) => it.hash));
        const fresh = missing.map((m, i) => ({ hash: m.hash, vector: Buffer.from(new Float32Array(out[i] ?? []).buffer) })).filter((f) => kept.has(f.hash));
        for (const f of fresh) vectors.set(f.hash, f.vector);
        tables.cache(fresh, this.model, this.dims);
      } catch (err) {
        this.log.warn({ err: errorMessage(err), items: missing.length }, 'embedding batch failed; those memories are searchable by text only');
      }
    }
    await this.index.whenWritable();
    const alive = tables.existing(hashed.map((it) => it.id));
    const ready: Array<{ id: string; vector: Buffer }> = [];
    for (const it of hashed) {
      if (!alive.has(it.id)) continue;
      const v = vectors.get(it.hash);
      if (v && v.byteLength === this.dims * 4) ready.push({ id: it.id, vector: v });
    }
    tables.store(ready);
  }

  /** The query's vector, or undefined (off, slow, failed): callers then search without it. */
  async embedQuery(text: string): Promise<Float32Array | undefined> {
    if (!this.active || !text.trim()) return undefined;
    try {
      const timeout = new Promise<undefined>((r) => setTimeout(() => r(undefined), QUERY_TIMEOUT_MS).unref());
      const res = await Promise.race([this.llm.embed(this.model, [text], this.dims), timeout]);
      return res?.[0] ? new Float32Array(res[0]) : undefined;
    } catch (err) {
      this.log.debug({ err: errorMessage(err) }, 'query embedding failed');
      return undefined;
    }
  }
}
