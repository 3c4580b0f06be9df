/**
 * What the process holds in memory, in MiB: for the owner of a small machine (`kill -USR2
 * <pid>` makes main.ts log it) and for `npm run bench -- memory`, which reads the line from the
 * daemon's log. The resident size counts every thread (the index's worker threads are isolates
 * with heaps of their own); the V8 figures are the main thread's alone. On Linux the split of
 * resident memory into anonymous (heaps, malloc) and file-backed (code, mapped files) comes
 * from /proc/self/smaps_rollup.
 */
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';

export interface MemoryReport {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Pages V8 has reserved for the main thread's heap and its code. */
  v8Physical: number;
  /** Each heap space's committed size (new_space, old_space, code_space, …). */
  spaces: Record<string, number>;
  /** /proc/self/smaps_rollup (Linux): resident anonymous and file-backed memory. */
  anonymous?: number;
  fileBacked?: number;
}

const MiB = (n: number): number => Math.round((n / 2 ** 20) * 10) / 10;

function rollup(): { anonymous: number; fileBacked: number } | undefined {
  try {
    const text = readFileSync('/proc/self/smaps_rollup', 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    const rss = kb('Rss');
    const anon = kb('Anonymous');
    if (!Number.isFinite(rss) || !Number.isFinite(anon)) return undefined;
    return { anonymous: MiB(anon), fileBacked: MiB(rss - anon) };
  } catch {
    return undefined;
  }
}

export function memoryReport(): MemoryReport {
  const u = process.memoryUsage();
  const h = v8.getHeapStatistics();
  return {
    rss: MiB(u.rss),
    heapUsed: MiB(u.heapUsed),
    heapTotal: MiB(u.heapTotal),
    external: MiB(u.external),
    arrayBuffers: MiB(u.arrayBuffers),
    v8Physical: MiB(h.total_physical_size),
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, MiB(s.physical_space_size)])),
    ...rollup(),
  };
}
