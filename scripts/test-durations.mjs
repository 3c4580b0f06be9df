// A reporter for Node's test runner, beside `spec` (scripts/run-tests.mjs): each test file's
// wall time as the file ends (a line of its own: `spec` prints a file's tests after the runner
// sees it end, so the line may come before or after them), then the slowest files, slowest
// first, each with the time its tests took. Under `--test-concurrency=2` two files share the
// machine, so a file's time includes waiting for the CPU: it is what to look at when the suite
// gets slow, not a benchmark. A file far slower than its tests spent its time loading, or after
// its last test, where a timer or socket left open keeps its process alive.
import path from 'node:path';

/** How many files the closing summary names. */
const SLOWEST = 15;

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

export default async function* fileDurations(source) {
  const files = [];
  /** Time in the top-level tests and suites of each file (absolute path → ms). */
  const inTests = new Map();
  for await (const event of source) {
    if (event.type !== 'test:complete' || event.data.nesting !== 0 || !event.data.file) continue;
    const ms = event.data.details?.duration_ms ?? 0;
    // With process isolation each file is one top-level test named by its path.
    if (event.data.name !== event.data.file) {
      inTests.set(event.data.file, (inTests.get(event.data.file) ?? 0) + ms);
      continue;
    }
    const passed = event.data.details?.passed !== false;
    files.push({ file: event.data.file, ms, passed });
    yield `⏱ ${seconds(ms).padStart(8)}  ${path.relative(process.cwd(), event.data.file)}${passed ? '' : '  (failed)'}\n`;
  }
  if (files.length === 0) return;
  const slowest = [...files].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
  const total = files.reduce((sum, f) => sum + f.ms, 0);
  let out = `\nSlowest test files (${files.length} files, ${seconds(total)} of file time in all):\n`;
  for (const f of slowest) {
    out += `  ${seconds(f.ms).padStart(8)}  ${path.relative(process.cwd(), f.file)}  (tests ${seconds(inTests.get(f.file) ?? 0)})${f.passed ? '' : '  (failed)'}\n`;
  }
  yield out;
}
