/**
 * What a store gives up and takes in when the state moves between the embedded files and
 * PostgreSQL (`npm run memory -- migrate --to postgres|files`, cli/migrate.ts). Each store's
 * file and PostgreSQL implementations both implement it with the same item type, so a store's
 * items dumped from one load into the other, and dumped again, are the same items (its contract
 * tests check that). Items are plain JSON values (strings kept exactly, byte for byte), so the
 * move needs no knowledge of what a store holds.
 *
 * The move runs with the daemon stopped (like purge): nothing else writes meanwhile.
 */
export interface Portable<Item> {
  /** A name for reports and errors ("sessions", "memory files", …). */
  readonly portableName: string;
  /** Everything the store keeps, item by item, in an order `load` accepts. */
  dump(): AsyncIterable<Item>;
  /** Adds the items to a store that holds none of them (the move empties it first). */
  load(items: AsyncIterable<Item>): Promise<number>;
  /** True when the store keeps nothing (the move refuses a target that keeps something, unless forced). */
  isEmpty(): Promise<boolean>;
  /** Deletes everything the store keeps (a forced move, before `load`). */
  clear(): Promise<void>;
}

/** Collects an async iterable (tests, small stores). */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
