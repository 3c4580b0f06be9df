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

  /**
   * `ingestMessage` unless the message is indexed already (the start after a crash, writing the
   * rows of the session log's exchanges again): 'saved', 'present', or 'later' (the index cannot
   * tell now: off, locked; the message stays in the session and its note).
   */
  ingestOnce(e: EpisodeInput & { sourceMessageId: string; role: string }): 'saved' | 'present' | 'later' {
    const have = this.index.hasEpisode(e.scope, e.sourceMessageId, e.role);
    if (have === undefined) return 'later';
    if (have) return 'present';
    return this.ingestMessage(e) ? 'saved' : 'later';
  }
}
