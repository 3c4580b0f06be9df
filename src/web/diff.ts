/**
 * A line diff for the memory page's "Save MEMORY.md" preview: which lines the save adds and
 * removes, in order, with the unchanged ones between (the page folds long unchanged runs).
 * Longest common subsequence over the lines that differ after the common head and tail; past
 * MAX_CELLS (files far bigger than a MEMORY.md) the middle is shown as all removed, then all
 * added, which is still exactly what the save does.
 */
export interface DiffLine {
  op: '=' | '+' | '-';
  text: string;
}

export interface LineDiff {
  added: number;
  removed: number;
  lines: DiffLine[];
}

const MAX_CELLS = 4_000_000;

const linesOf = (t: string): string[] => (t === '' ? [] : t.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n'));

export function lineDiff(before: string, after: string): LineDiff {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const middle: DiffLine[] = [];
  if (x.length * y.length > MAX_CELLS) {
    for (const t of x) middle.push({ op: '-', text: t });
    for (const t of y) middle.push({ op: '+', text: t });
  } else {
    // lcs[i][j]: the common subsequence length of x[i..] and y[j..].
    const w = y.length + 1;
    const lcs = new Uint32Array((x.length + 1) * w);
    for (let i = x.length - 1; i >= 0; i--) {
      for (let j = y.length - 1; j >= 0; j--) {
        lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        middle.push({ op: '=', text: x[i++]! });
        j++;
      } else if (i < x.length && (j === y.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) middle.push({ op: '-', text: x[i++]! });
      else middle.push({ op: '+', text: y[j++]! });
    }
  }
  const lines = [
    ...a.slice(0, head).map((text) => ({ op: '=' as const, text })),
    ...middle,
    ...a.slice(a.length - tail).map((text) => ({ op: '=' as const, text })),
  ];
  return { added: lines.filter((l) => l.op === '+').length, removed: lines.filter((l) => l.op === '-').length, lines };
}
