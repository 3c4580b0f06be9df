/**
 * The BPE table of an encoding, read from gpt-tokenizer's `.tiktoken` file (a base64 token and
 * its rank per line) the way the package's generated module `bpeRanks/<encoding>.js` was made
 * from it (its codegen/generateJsBpe.ts; test/llm/bpe-ranks.test.ts checks both give the same
 * table). Why not import that module: V8 keeps an ES module's source and top-level code while
 * the process lives (3.7 MiB of source and 1.6 MiB of bytecode for o200k_base), and compiling
 * its 2.2 MB array literal left ~17 MiB of C heap the daemon never gave back
 * (docs/BENCHMARKS.md, "Resident memory").
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Encoding } from './catalogue.js';

/** As gpt-tokenizer takes it: by rank, the token's text, or its bytes when they are not UTF-8. */
export type BpeRanks = Array<string | number[]>;

export async function loadBpeRanks(encoding: Encoding): Promise<BpeRanks> {
  const file = createRequire(import.meta.url).resolve(`gpt-tokenizer/data/${encoding}.tiktoken`);
  const text = await readFile(file, 'utf8');
  // As the codegen decides: the token as text when its bytes are UTF-8 that encodes back to them.
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const ranks: BpeRanks = [];
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const space = text.indexOf(' ', start);
    if (space > start && space < end) {
      const bytes = Buffer.from(text.slice(start, space), 'base64');
      let token: string | number[];
      try {
        const s = utf8.decode(bytes);
        token = Buffer.byteLength(s) === bytes.length ? s : Array.from(bytes);
      } catch {
        token = Array.from(bytes);
      }
      ranks[Number(text.slice(space + 1, end))] = token;
    }
    start = end + 1;
  }
  return ranks;
}
