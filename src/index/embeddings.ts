/**
 * Optional embeddings (EMBEDDINGS_MODEL): computed off the hot path in batches, cached by
 * content hash, stored in a sqlite-vec `vec0` table locked to EMBEDDINGS_DIMENSIONS. A
 * dimension change is caught at start: vector search turns off with a warning saying how to
 * rebuild (seed 003). Without a model, nothing here runs and search is FTS + entities.
 */
import { createHash } from 'node:crypto';
import type { LlmClient } from '../llm/client.js';
import type { Logger } from '../log.js';
import type { MemoryIndex } from './memory-index.js';
import { errorMessage } from '../errors.js';

const BATCH = 32;
const FLUSH_MS = 500;
const QUERY_TIMEOUT_MS = 3_000;

export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

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
    const db = this.index.database;
    if (!db) return;
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
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS vec_memories USING vec0(memory_id TEXT PRIMARY KEY, embedding float[${this.dims}])`);
    this.index.setMeta('embedding_dimensions', String(this.dims));
    this.index.setMeta('embedding_model', this.model);
    this.active = true;
    this.index.vectorsOn = true;
  }

  /** Drops and recreates the vector table at the configured size (reindex --embeddings). */
  reset(): void {
    const db = this.index.database;
    if (!db || !this.index.vecLoaded) return;
    db.exec('DROP TABLE IF EXISTS vec_memories');
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
    this.running = this.running.then(async () => {
      for (let i = 0; i < items.length; i += BATCH) await this.embedBatch(items.slice(i, i + BATCH));
    });
    return this.running;
  }

  private async embedBatch(items: Array<{ id: string; content: string }>): Promise<void> {
    const db = this.index.database;
    if (!db) return;
    const cached = db.prepare('SELECT vector FROM embedding_cache WHERE hash = ? AND model = ? AND dims = ?');
    const vectors = new Map<string, Buffer>();
    const missing: Array<{ hash: string; content: string }> = [];
    for (const it of items) {
      const hash = contentHash(it.content);
      const row = cached.get(hash, this.model, this.dims) as { vector: Buffer } | undefined;
      if (row) vectors.set(hash, row.vector);
      else if (!missing.some((m) => m.hash === hash)) missing.push({ hash, content: it.content });
    }
    if (missing.length > 0) {
      try {
        const out = await this.llm.embed(this.model, missing.map((m) => m.content), this.dims);
        const put = db.prepare('INSERT OR REPLACE INTO embedding_cache (hash, model, dims, vector) VALUES (?, ?, ?, ?)');
        missing.forEach((m, i) => {
          const buf = Buffer.from(new Float32Array(out[i] ?? []).buffer);
          vectors.set(m.hash, buf);
          put.run(m.hash, this.model, this.dims, buf);
        });
      } catch (err) {
        this.log.warn({ err: errorMessage(err), items: missing.length }, 'embedding batch failed; those memories are searchable by text only');
      }
    }
    const insert = db.prepare('INSERT OR REPLACE INTO vec_memories (memory_id, embedding) VALUES (?, ?)');
    db.transaction(() => {
      for (const it of items) {
        const v = vectors.get(contentHash(it.content));
        if (v && v.byteLength === this.dims * 4) insert.run(it.id, v);
      }
    })();
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
