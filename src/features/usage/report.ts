/**
 * `npm run memory -- usage [--days 7] [--chat CHANNEL:ID]`: tokens per day from
 * `workspace/usage.db`, one table per chat (answers and background calls apart, cached share).
 */
import { subDays } from 'date-fns';
import type { Config } from '../../config/env.js';
import { sumUsage, type UsageRow } from './usage.js';
import { SqliteUsageStore } from './sqlite-usage.js';

const fmt = (n: number) => n.toLocaleString('en-US');

export function formatUsageTables(rows: UsageRow[]): string {
  if (rows.length === 0) return 'No token usage recorded in that period.';
  const byChat = new Map<string, UsageRow[]>();
  for (const r of rows) byChat.set(r.chat, [...(byChat.get(r.chat) ?? []), r]);
  const out: string[] = [];
  for (const [chat, list] of [...byChat].sort(([a], [b]) => a.localeCompare(b))) {
    const header = ['day', 'calls', 'answers', 'background', 'prompt', 'cached', 'completion', 'total'];
    const lines: string[][] = [];
    const days = [...new Set(list.map((r) => r.day))];
    for (const day of days) {
      const d = list.filter((r) => r.day === day);
      const all = sumUsage(d);
      const answers = sumUsage(d.filter((r) => r.kind === 'answer'));
      const cached = all.promptTokens > 0 ? `${((all.cachedTokens / all.promptTokens) * 100).toFixed(1)}%` : '-';
      lines.push([
        day,
        fmt(all.calls),
        fmt(answers.total),
        fmt(all.total - answers.total),
        fmt(all.promptTokens),
        cached,
        fmt(all.completionTokens),
        fmt(all.total),
      ]);
    }
    const all = sumUsage(list);
    lines.push([
      'all',
      fmt(all.calls),
      fmt(sumUsage(list.filter((r) => r.kind === 'answer')).total),
      fmt(sumUsage(list.filter((r) => r.kind !== 'answer')).total),
      fmt(all.promptTokens),
      all.promptTokens > 0 ? `${((all.cachedTokens / all.promptTokens) * 100).toFixed(1)}%` : '-',
      fmt(all.completionTokens),
      fmt(all.total),
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
    const row = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    out.push(`${chat === '*' ? '* (embeddings, all chats)' : chat}`, row(header), ...lines.map(row));
    const estimated = list.reduce((n, r) => n + r.estimatedTokens, 0);
    const estimatedCalls = list.reduce((n, r) => n + r.estimatedCalls, 0);
    if (estimatedCalls > 0) {
      out.push(
        `(${fmt(estimated)} of these tokens are the bot's own count for ${fmt(estimatedCalls)} call${estimatedCalls === 1 ? '' : 's'} that ended without the server's figures: stopped, timed out or cut off)`,
      );
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}

export async function runUsageCommand(args: string[], config: Config): Promise<number> {
  const i = args.indexOf('--days');
  const days = i >= 0 ? Number(args[i + 1]) : 7;
  if (!Number.isInteger(days) || days < 1 || days > 3660) {
    process.stderr.write('usage: --days takes a whole number of days (1 or more), e.g. --days 7\n');
    return 2;
  }
  const c = args.indexOf('--chat');
  const chat = c >= 0 ? args[c + 1] : undefined;
  const store = SqliteUsageStore.existing(config.workspaceDir, config.timezone, { readonly: true });
  if (!store) {
    process.stdout.write(`No token usage recorded yet (${SqliteUsageStore.fileIn(config.workspaceDir)} does not exist).\n`);
    return 0;
  }
  try {
    const until = store.dayOf();
    const since = store.dayOf(subDays(new Date(), days - 1));
    process.stdout.write(
      `Tokens per day, ${since} to ${until} (${config.timezone}):\n\n${formatUsageTables(await store.rows({ since, until, ...(chat ? { chat } : {}) }))}\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
