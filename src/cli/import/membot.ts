/**
 * A membot `/export` file (features/privacy/export.ts): its exact copy (export-copy.ts) holds the
 * chat's memory files and index rows as they were; the Markdown above it is only read by people.
 */
import path from 'node:path';
import type { ImportBundle } from './bundle.js';
import { MAX_TOTAL_BYTES, SourceTree } from './source.js';
import { parseCopy } from '../../features/privacy/export-copy.js';

/** The bundle of the export at `file`; a string says why it cannot be imported. */
export async function readMembot(file: string): Promise<ImportBundle | string> {
  const tree = await SourceTree.open(path.dirname(file));
  if (!tree) return `${file} is not a membot export file`;
  // One file holds a whole chat: it may be as large as a whole import.
  const text = await tree.read(path.basename(file), MAX_TOTAL_BYTES);
  if (text === undefined) {
    const why = tree.skipped[0]?.why;
    return why ? `${file} was not read: ${why}` : `${file} does not exist`;
  }
  const copy = parseCopy(text);
  if (!copy) return `${file} has no exact copy to import (an export made before imports were possible, or not a membot export): make a new /export`;
  if (copy.bad > 0) tree.skip(path.basename(file), `${copy.bad} line(s) of the copy were not a file or a row of the expected shape`);
  return { label: 'membot', memory: [], notes: [], history: [], skipped: tree.skipped, exact: { files: copy.files, rows: copy.rows } };
}
