/**
 * The check every store's contract runs on its `Portable` side (src/storage/portable.ts): what
 * one store dumps, loaded into a fresh store of the same kind, dumps again as the same items;
 * the fresh store was empty before and is not after; `clear` empties it. Items are compared as
 * JSON values (key order aside); `sort` puts them in one order where a store keeps none.
 */
import assert from 'node:assert/strict';
import { collect, type Portable } from '../../src/storage/portable.js';

export async function assertMovesWhole<I>(from: Portable<I>, into: Portable<I>, sort: (items: I[]) => I[] = (items) => items): Promise<I[]> {
  const items = await collect(from.dump());
  assert.ok(items.length > 0, `${from.portableName}: something to move`);
  assert.equal(await from.isEmpty(), false, `${from.portableName}: a store holding items is not empty`);
  assert.equal(await into.isEmpty(), true, `${into.portableName}: a fresh store is empty`);
  assert.equal(await into.load(from.dump()), items.length, 'every item loaded');
  assert.deepEqual(sort(await collect(into.dump())), sort(items), 'the same items, dumped again');
  assert.equal(await into.isEmpty(), false);
  assert.deepEqual(sort(await collect(from.dump())), sort(items), 'the source is not changed');
  await into.clear();
  assert.equal(await into.isEmpty(), true, 'cleared: empty');
  assert.deepEqual(await collect(into.dump()), [], 'cleared: nothing to dump');
  return items;
}

/** Items in the order of their JSON text. */
export const byJson = <I>(items: I[]): I[] => [...items].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
