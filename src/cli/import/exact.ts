/**
 * A membot export's exact copy taken back into a chat (`--from membot`). Into a chat with no
 * memory yet, each file is written as it was, byte for byte, and each index row is saved with
 * its own time, kind, speaker, confidence and order in its conversation: the same files and the
 * same search results as the chat it was exported from. Into a chat with memory of its own, the
 * files merge like any import (entries, missing note lines, missing history entries) and rows
 * already taken are found by their key.
 */
import { HISTORY_FILE, MEMORY_FILE, MONTHLY_RE, NOTE_RE } from '../../memory/files.js';
import type { ExportCopy } from '../../features/privacy/export-copy.js';
import { markdownEntries } from './bundle.js';
import { appendMissing, keyOf, mergeEntries, type Importer, type ImportTarget } from './apply.js';

/** `## <ISO time>` blocks of a HISTORY.md text: each entry with its time. */
function historyEntries(text: string): Array<{ at: Date; body: string }> {
  const out: Array<{ at: Date; body: string }> = [];
  for (const block of text.split(/^## /m).slice(1)) {
    const nl = block.indexOf('\n');
    const at = new Date((nl < 0 ? block : block.slice(0, nl)).trim());
    const body = nl < 0 ? '' : block.slice(nl + 1).trim();
    if (!Number.isNaN(at.getTime()) && body) out.push({ at, body });
  }
  return out;
}

async function restoreFiles(t: ImportTarget, imp: Importer, copy: ExportCopy): Promise<void> {
  const r = imp.report;
  let historyRestored = false;
  for (const f of copy.files) {
    const name = f.file;
    if (name === MEMORY_FILE) {
      const parts = [{ file: name, text: f.text, entries: markdownEntries(f.text) }];
      let merged = { text: '', added: 0, present: 0 };
      let whole = false;
      await t.files.changeMemory('import membot', (cur) => {
        if ((whole = cur === '')) return f.text;
        merged = mergeEntries(cur, parts, 'membot');
        return merged.added > 0 ? merged.text : null;
      });
      if (whole) r.restored.push(name);
      else r.memory = { added: merged.added, present: merged.present, files: [name] };
    } else if (NOTE_RE.test(name)) {
      const lines = f.text.replace(/\n$/, '').split('\n');
      let res: { text: string | null; added: number; present: number } = { text: null, added: 0, present: 0 };
      let hadNote = false;
      await t.files.update(name, (cur) => {
        hadNote = cur !== '';
        if (!hadNote) return f.text;
        res = appendMissing(cur, lines);
        return res.text;
      });
      if (!hadNote) r.restored.push(name);
      else r.notes.push({ date: NOTE_RE.exec(name)![1]!, ...res, hadNote });
    } else if (name === HISTORY_FILE) {
      await t.files.update(name, (cur) => {
        historyRestored = cur === '';
        return historyRestored ? f.text : null;
      });
      if (historyRestored) r.restored.push(name);
      else {
        const current = await t.files.readHistory();
        for (const e of historyEntries(f.text)) {
          if (current.includes(e.body)) r.history.present++;
          else {
            await t.files.appendHistory(e.body, e.at);
            r.history.added++;
          }
        }
      }
    } else if (MONTHLY_RE.test(name)) {
      // Its entries came in with HISTORY.md: as they were when that was restored whole, else merged by appendHistory.
      if (!historyRestored) continue;
      let wrote = false;
      await t.files.update(name, (cur) => ((wrote = cur === '') ? f.text : null));
      if (wrote) r.restored.push(name);
    } else r.skipped.push({ file: name, why: 'not a memory file name (MEMORY.md, YYYY-MM-DD.md, HISTORY.md, HISTORY-YYYY-MM.md)' });
  }
}

function restoreRows(t: ImportTarget, imp: Importer, copy: ExportCopy): void {
  const r = imp.report;
  // In event order, and in its conversation's order: the index numbers a conversation's messages as they are saved.
  const rows = copy.rows.map((row, i) => ({ row, i })).sort((a, b) => a.row.event_time - b.row.event_time || (a.row.seq ?? 0) - (b.row.seq ?? 0) || a.i - b.i);
  const kept = t.index.browse?.everything(t.scope) ?? [];
  const existing = new Set(kept.filter((x) => x.kind === 'reflection').map((x) => x.content));
  // The chat's own messages (an export taken back into the chat it came from): there already.
  const same = (x: { event_time: number; source_role: string | null; content: string }) => `${x.event_time}\u0000${x.source_role}\u0000${x.content}`;
  const have = new Map<string, number>();
  for (const x of kept) if (x.kind === 'episode') have.set(same(x), (have.get(same(x)) ?? 0) + 1);
  const seen = new Map<string, number>();
  for (const { row } of rows) {
    const at = new Date(row.event_time * 1000);
    if (row.kind === 'episode') {
      const there = have.get(same(row)) ?? 0;
      if (there > 0) {
        have.set(same(row), there - 1);
        r.index.present++;
        continue;
      }
      const session = `import:membot:${keyOf(t.scope, row.session_id ?? 'none')}`;
      const k = keyOf(row.session_id, row.seq, row.event_time, row.source_role, row.content);
      const n = (seen.get(k) ?? 0) + 1;
      seen.set(k, n);
      const role = row.source_role === 'assistant' ? 'assistant' : 'user';
      imp.episode(row.content, at, session, keyOf(t.scope, 'membot', k, n), role, row.speaker ?? undefined);
    } else if (row.kind === 'fact') {
      if (row.valid_until !== null)
        r.skipped.push({
          file: 'fact',
          why: `retired ${new Date(row.valid_until * 1000).toISOString().slice(0, 10)}, not taken back (the index takes in live facts): "${row.content.slice(0, 60)}"`,
        });
      else imp.fact(row.content, row.confidence, at);
    } else if (row.kind === 'reflection') {
      if (r.index.off) continue;
      if (existing.has(row.content)) r.index.present++;
      else if (t.index.saveReflection(row.content, t.scope, [])) {
        existing.add(row.content);
        r.index.reflections++;
      } else r.index.later++;
    } else r.skipped.push({ file: 'row', why: `unknown kind "${row.kind}"` });
  }
}

export async function applyExact(t: ImportTarget, imp: Importer, copy: ExportCopy): Promise<void> {
  await restoreFiles(t, imp, copy);
  restoreRows(t, imp, copy);
}
