/**
 * Every system's place in the pipeline, in one table. 18/20/30/50/55 come from the design
 * (seed 001); 10, 15, 35, 40 and 45 are ours. `docs/pipeline.md` shows the same table and a test keeps them equal.
 */
export const ORDER = {
  Transcription: 10,
  Images: 15,
  AutoCompaction: 18,
  ContextBuilding: 20,
  ToolLoop: 30,
  RememberRequest: 35,
  ResponseDelivery: 40,
  WhyRecord: 45,
  MemoryPersist: 50,
  Indexing: 55,
} as const;

export type SystemName = keyof typeof ORDER;
