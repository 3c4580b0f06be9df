/**
 * What a 200,000-character answer, or a 200,000-character MEMORY.md line, costs the other
 * chats (issue 11: regexes and the tokenizer were quadratic on long runs; another chat waited
 * more than 120 s). The real app handles chat A's long text while chat B keeps sending
 * messages one after another; reported: B's slowest turn meanwhile against its usual one, the
 * longest the event loop was blocked, and Telegram's split + render of the answer (the
 * channel's own work before sending). The LLM stub runs in this process (the answer must
 * depend on the chat); it answers B at once.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createApp, type App } from '../../src/app/app.js';
import { silentLogger } from '../../src/core/log.js';
import { splitMessage } from '../../src/channels/telegram/split.js';
import { renderTelegramHtml } from '../../src/channels/telegram/render.js';
import { startFakeLlm, lastUserText, text } from '../../test/helpers/fake-llm.js';
import { tempDir, testConfig } from '../../test/helpers/workspace.js';
import { msg } from './pipeline.js';

const N = 200_000;
const ANSWERS: Record<string, string> = {
  letters: 'a'.repeat(N),
  'spaces inside a line': `a${' '.repeat(N)}b`,
  'tabs and spaces': `${' \t'.repeat(N / 2)}x`,
  'email-like runs, names, dots': `${'a.'.repeat(N / 4)}@ ${'x Anna, y Bob, '.repeat(N / 30)}`,
  'unclosed Markdown (*a, [a](, #\\t…)': `${'*a '.repeat(N / 9)}${'[a]('.repeat(N / 12)}\n${`# ${'\t'.repeat(4000)}x\n`.repeat(N / 12_000)}`,
  CJK: '字'.repeat(N),
};

async function turn(app: App, chatId: string, t: string): Promise<number> {
  const t0 = performance.now();
  await app.handle(msg(chatId, t), async () => undefined);
  return performance.now() - t0;
}

export async function benchLongText(): Promise<Record<string, string>> {
  let big = '';
  const llm = await startFakeLlm((req) => text(lastUserText(req) === 'big' ? big : 'short answer'), { record: false });
  const ws = await tempDir('membot-bench-long-');
  await mkdir(path.join(ws.dir, 'preferences'), { recursive: true });
  await writeFile(path.join(ws.dir, 'preferences', 'runtime-config.json'), JSON.stringify({ compaction: { maxContextTokens: 10_000_000 } }));
  const app = await createApp(testConfig({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir, LLM_MODEL: 'gpt-4.1' }), silentLogger());
  const out: Record<string, string> = {};
  try {
    for (let i = 0; i < 20; i++) await turn(app, 'B', `warm-up ${i}`);
    const usual: number[] = [];
    for (let i = 0; i < 50; i++) usual.push(await turn(app, 'B', `usual ${i}`));
    usual.sort((a, b) => a - b);
    out['chat B alone: turn p50 / max'] = `${usual[25]!.toFixed(0)} / ${usual.at(-1)!.toFixed(0)} ms`;

    const cases: Array<[string, string, boolean]> = [
      ...Object.entries(ANSWERS).map(([k, v]) => [`200,000-character answer: ${k}`, v, false] as [string, string, boolean]),
      ['200,000-character MEMORY.md line (letters), short answers', '', true],
    ];
    let n = 0;
    for (const [name, answer, memoryLine] of cases) {
      const chatId = `A${++n}`;
      if (memoryLine) {
        const dir = app.parts.memory.forChat('bench', chatId).dir;
        await mkdir(dir, { recursive: true });
        await writeFile(path.join(dir, 'MEMORY.md'), `# Notes\n- ${'z'.repeat(N)}\n`);
      }
      big = memoryLine ? 'short answer' : answer;
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      let busy = true;
      const bTimes: number[] = [];
      const other = (async () => {
        while (busy) bTimes.push(await turn(app, 'B', 'meanwhile'));
      })();
      // Two turns of A: the first stores, notes and indexes the answer (and reads MEMORY.md);
      // the second counts the stored answer in the session.
      const a1 = await turn(app, chatId, 'big');
      const a2 = await turn(app, chatId, 'big');
      busy = false;
      await other;
      delay.disable();
      let render = 0;
      if (!memoryLine) {
        const t0 = performance.now();
        for (const chunk of splitMessage(answer)) renderTelegramHtml(chunk);
        render = performance.now() - t0;
      }
      out[name] =
        `chat B slowest turn meanwhile ${Math.max(...bTimes).toFixed(0)} ms (${bTimes.length} turns); event loop blocked at most ${(delay.max / 1e6).toFixed(0)} ms; ` +
        `chat A's turns ${a1.toFixed(0)} + ${a2.toFixed(0)} ms` +
        (memoryLine ? '' : `; Telegram split + render ${render.toFixed(0)} ms`);
    }
  } finally {
    await app.stop();
    await llm.close();
    await ws.cleanup();
  }
  return out;
}
