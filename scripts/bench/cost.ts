/**
 * `npm run bench -- cost`: what each turn sends to the model. Two 200-turn conversations of one
 * chat through the real app, the LLM stub on loopback recording every request:
 *   a) one day, no compaction (context limit 100k tokens);
 *   b) the same, with a 16k-token limit so the conversation crosses compactions.
 * Both chats start with a MEMORY.md, yesterday's notes and an earlier conversation in the index,
 * as a chat that has been used for a while does. Per turn: input tokens (exact BPE count of the
 * request: messages + tool definitions), prefix share (the part of the request, by characters,
 * that is a byte-identical prefix of the chat's previous request: what a provider's prompt cache
 * can reuse), and duplicated exchanges (note lines in the request whose exchange is also there
 * as messages). "Steady" turns: not the first, no compaction and no MEMORY.md change before them.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createApp } from '../../src/app/app.js';
import { silentLogger } from '../../src/core/log.js';
import { IndexingService } from '../../src/index/ingest.js';
import { formatNoteLine, cutChars } from '../../src/memory/notes.js';
import { completion, memoryAwareResponder, promptKind, startFakeLlm, type RecordedRequest } from '../../test/helpers/fake-llm.js';
import { tempDir, testConfig } from '../../test/helpers/workspace.js';
import { rng, userText, assistantText } from './text.js';

const TURNS = 200;
const DAY = Date.UTC(2026, 2, 10, 8, 0);

/** How a provider sees a request for prefix caching: tool definitions, then the messages in order. */
export function renderRequest(body: any): string {
  return [JSON.stringify(body.tools ?? []), ...(body.messages as unknown[]).map((m) => JSON.stringify(m))].join('\n');
}

export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

const NOTE_LINE = /^\[\d\d:\d\d\] User: (.*?) \| Assistant: /;

/** Note lines in the request's system messages whose user text is also a user message of the request. */
export function duplicatedExchanges(body: any): number {
  const msgs = body.messages as Array<{ role: string; content: unknown }>;
  const users = new Set(msgs.filter((m) => m.role === 'user').map((m) => cutChars(String(m.content), 200).replace(/\r\n|\r|\n/g, ' ')));
  let n = 0;
  for (const m of msgs) {
    if (m.role !== 'system') continue;
    for (const line of String(m.content).split('\n')) {
      const hit = NOTE_LINE.exec(line);
      if (hit && users.has(hit[1]!)) n++;
    }
  }
  return n;
}

/** Where a request's tokens go: the parts of the prompt layout (docs/how-it-works.md, "The prompt, in order"). */
export const PARTS = [
  'tools',
  'instructions',
  'long-term memory',
  "today's notes",
  'recent context',
  'summary',
  'history',
  'relevant memory',
  'new message',
] as const;
export type Part = (typeof PARTS)[number];

/** Tokens of each part of one request (text counts; the few framing tokens per message are left out). */
export function breakdown(body: any, count: (t: string) => number, countTools: (t: any[]) => number): Record<Part, number> {
  const out = Object.fromEntries(PARTS.map((p) => [p, 0])) as Record<Part, number>;
  out.tools = countTools(body.tools ?? []);
  const msgs = body.messages as Array<{ role: string; content: unknown; tool_calls?: unknown }>;
  const lastUser = msgs.map((m) => m.role).lastIndexOf('user');
  msgs.forEach((m, i) => {
    const text = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
    const calls = m.tool_calls ? count(JSON.stringify(m.tool_calls)) : 0;
    if (i === 0 && m.role === 'system') {
      // The system prompt: instructions, then `# Memory` with its `##` sections.
      const mem = text.indexOf('# Memory\n');
      out.instructions += count(mem >= 0 ? text.slice(0, mem) : text);
      if (mem < 0) return;
      const sections = text.slice(mem).split(/\n(?=## )/);
      for (const s of sections) {
        const part: Part = s.startsWith("## Today's Notes") ? "today's notes" : s.startsWith('## Recent Context') ? 'recent context' : 'long-term memory';
        out[part] += count(s);
      }
    } else if (m.role === 'system' && text.startsWith('[Conversation summary]')) out.summary += count(text);
    else if (m.role === 'system' && text.startsWith('# Relevant Memory')) out['relevant memory'] += count(text);
    else if (i === lastUser) out['new message'] += count(text);
    else out.history += count(text) + calls;
  });
  return out;
}

interface TurnFigures {
  tokens: number;
  parts: Record<Part, number>;
  /** Of which: system messages, tool definitions. */
  system: number;
  tools: number;
  share: number;
  dups: number;
  steady: boolean;
}

async function runConversation(label: string, maxContextTokens: number): Promise<{ turns: TurnFigures[]; compactions: number[] }> {
  const r = rng(15);
  const chatRequests: RecordedRequest[] = [];
  const llm = await startFakeLlm(
    (req) => {
      if (!req.path.endsWith('/chat/completions')) return { json: {} };
      if (promptKind(req) !== 'chat') return memoryAwareResponder(req, 0);
      chatRequests.push(req);
      // Replies of one to three sentences (~100–400 characters), as a concise assistant gives.
      const parts = 1 + Math.floor(r() * 3);
      return { json: completion(Array.from({ length: parts }, () => assistantText(r)).join(' ')) };
    },
    { record: false },
  );
  const ws = await tempDir('membot-bench-cost-');
  try {
    await mkdir(path.join(ws.dir, 'preferences'), { recursive: true });
    await writeFile(path.join(ws.dir, 'preferences', 'runtime-config.json'), JSON.stringify({ compaction: { maxContextTokens } }));
    const chatId = `cost-${label}`;
    const memDir = path.join(ws.dir, 'memory', `bench:${chatId}`);
    await mkdir(memDir, { recursive: true });
    const seed = rng(7);
    await writeFile(path.join(memDir, 'MEMORY.md'), `${['# About the user', ...Array.from({ length: 12 }, () => `- ${userText(seed)}`)].join('\n')}\n`);
    const yesterday = new Date(DAY - 86_400_000);
    await writeFile(
      path.join(memDir, '2026-03-09.md'),
      `${Array.from({ length: 15 }, (_, i) => formatNoteLine(new Date(yesterday.getTime() + i * 600_000), 'UTC', userText(seed), assistantText(seed))).join('\n')}\n`,
    );
    const config = testConfig({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir, LLM_MODEL: 'gpt-4.1' });
    const app = await createApp(config, silentLogger());
    try {
      // An earlier conversation of this chat in the index: what `# Relevant Memory` finds.
      const ingest = new IndexingService(app.parts.index);
      for (let i = 0; i < 300; i++) {
        ingest.ingestMessage({
          content: i % 2 ? assistantText(seed) : userText(seed),
          role: i % 2 ? 'assistant' : 'user',
          speaker: 'x',
          sessionId: 'earlier',
          scope: `bench:${chatId}`,
          eventTime: new Date(DAY - 3 * 86_400_000 + i * 60_000),
          sourceMessageId: `e${i}`,
        });
      }
      const turns: TurnFigures[] = [];
      let previous: string | undefined;
      const compactions: number[] = [];
      const memHash = async () =>
        createHash('sha1')
          .update(await readFile(path.join(memDir, 'MEMORY.md'), 'utf8').catch(() => ''))
          .digest('hex');
      for (let t = 0; t < TURNS; t++) {
        const session = await app.parts.sessions.getOrCreate('bench', chatId);
        const compactedBefore = session.metadata.messagesCompacted;
        const hashBefore = await memHash();
        const seen = chatRequests.length;
        await app.handle(
          {
            channel: 'bench',
            chatId,
            userId: '1',
            userName: 'user1',
            text: `${userText(r)} (#${t + 1})`,
            messageId: String(t + 1),
            receivedAt: new Date(DAY + t * 60_000),
          },
          async () => {},
        );
        const compacted = session.metadata.messagesCompacted !== compactedBefore;
        if (compacted) compactions.push(t + 1);
        const req = chatRequests[seen];
        if (!req) throw new Error(`turn ${t + 1}: no request reached the model`);
        const body = req.body;
        const rendered = renderRequest(body);
        const tokens = app.parts.models.defaultModel.tokens.countMessages(body.messages) + app.parts.models.defaultModel.tokens.countTools(body.tools ?? []);
        const share = previous === undefined ? 0 : commonPrefix(previous, rendered) / rendered.length;
        // MEMORY.md written by this turn's compaction changes this turn's prompt too.
        const steady = previous !== undefined && !compacted && hashBefore === (await memHash());
        const system = app.parts.models.defaultModel.tokens.countMessages(body.messages.filter((m: { role: string }) => m.role === 'system'));
        const tools = app.parts.models.defaultModel.tokens.countTools(body.tools ?? []);
        turns.push({
          tokens,
          parts: breakdown(
            body,
            (x) => app.parts.models.defaultModel.tokens.countText(x),
            (x) => app.parts.models.defaultModel.tokens.countTools(x),
          ),
          system,
          tools,
          share,
          dups: duplicatedExchanges(body),
          steady,
        });
        previous = rendered;
      }
      return { turns, compactions };
    } finally {
      await app.stop();
    }
  } finally {
    await llm.close();
    await ws.cleanup();
  }
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function summarize(run: { turns: TurnFigures[]; compactions: number[] }): Record<string, string> {
  const { turns } = run;
  const steady = turns.filter((t) => t.steady);
  const tokens = turns.map((t) => t.tokens);
  return {
    'input tokens per turn': `mean ${Math.round(mean(tokens)).toLocaleString('en-US')}, median ${median(tokens).toLocaleString('en-US')}, turn 200 ${tokens[tokens.length - 1]!.toLocaleString('en-US')}; total ${tokens.reduce((a, b) => a + b, 0).toLocaleString('en-US')}`,
    'of which system messages / tool definitions': `mean ${Math.round(mean(turns.map((t) => t.system))).toLocaleString('en-US')} / ${Math.round(mean(turns.map((t) => t.tools))).toLocaleString('en-US')}`,
    'by part, mean tokens per turn': PARTS.map((p) => `${p} ${Math.round(mean(turns.map((t) => t.parts[p]))).toLocaleString('en-US')}`).join(', '),
    'prefix share, steady turns': `mean ${pct(mean(steady.map((t) => t.share)))}, median ${pct(median(steady.map((t) => t.share)))}, min ${pct(Math.min(...steady.map((t) => t.share)))} (${steady.length} steady turns; turns 21–200 only: mean ${pct(mean(steady.slice(19).map((t) => t.share)))})`,
    "input tokens per turn outside the previous request's prefix (tokens × (1 − prefix share), what a prompt cache leaves at full price)": `mean ${Math.round(mean(turns.slice(1).map((t) => t.tokens * (1 - t.share)))).toLocaleString('en-US')}`,
    'prefix share, all turns after the first': `mean ${pct(mean(turns.slice(1).map((t) => t.share)))}`,
    'duplicated exchanges': `${turns.reduce((a, t) => a + t.dups, 0).toLocaleString('en-US')} in all (max ${Math.max(...turns.map((t) => t.dups))} in one request)`,
    compactions: run.compactions.length === 0 ? '0' : `${run.compactions.length} (turn ${run.compactions.join(', ')})`,
  };
}

export async function benchCost(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [label, limit, title] of [
    ['day', 100_000, 'a) 200 turns, one day, no compaction'],
    ['compact', 16_000, 'b) 200 turns, 16k-token limit (crosses compactions)'],
  ] as const) {
    const res = await runConversation(label, limit);
    for (const [k, v] of Object.entries(summarize(res))) out[`${title}: ${k}`] = v;
  }
  return out;
}
