/**
 * The one ingest path into the index, used by the Indexing system for live messages and by
 * the retrieval eval for datasets, so both measure the same thing.
 */
import type { MemoryIndex } from './memory-index.js';
import type { EpisodeInput } from './store/repository.js';

/** Where a saved message's text goes to be embedded (the Embedder, in upkeep/, when vectors are on). */
export interface EmbedQueue {
  enqueue(id: string, text: string): void;
}

export class IndexingService {
  constructor(
    readonly index: MemoryIndex,
    private readonly embedder?: EmbedQueue | undefined,
  ) {}

  /** Saves one message as an episode (entities linked, FTS synced); embedding is queued, not awaited. */
  ingestMessage(e: EpisodeInput): string | null {
    const content = e.content.trim();
    if (!content) return null;
    // A message held (locked file, a scrub after /forget) is embedded once it is written.
    const embed = (id: string) => this.embedder?.enqueue(id, content);
    const id = this.index.saveEpisode({ ...e, content }, embed);
    if (id) embed(id);
    return id;
  }
}
