/**
 * Streamed answers, end to end: the real daemon and Telegram channel (telegraf) against the Bot
 * API emulator (with the tests' sendMessageDraft stand-in), the LLM stub streaming a 600-character
 * answer 10 characters every 40 ms (~2.4 s). Times are taken where the user would see them: when
 * the Bot API received the call (the proxy's clock) against when the stub sent the first and last
 * piece of text (the same process, the same clock).
 *
 *  - first visible text − first token: drafts (private chat), placeholder (group, edit mode), and
 *    with STREAMING=off, where the first text is the whole answer;
 *  - finished answer − last token: the final sendMessage (draft) or final edit (edit mode).
 */
import { startTelegramBot, type TelegramTestBot } from '../../test/helpers/telegram.js';
import { text } from '../../test/helpers/fake-llm.js';
import { waitFor } from '../../test/helpers/wait.js';

const ANSWER = `**Bench**: ${'streamed words '.repeat(40).trim()}.`;
const GROUP = -1042;
const TURNS = 5;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms (${xs.length} answers)`;

const PACE_MS = 40;
const STREAM_MS = Math.ceil(ANSWER.length / 10) * PACE_MS;

async function run(mode: 'draft' | 'edit' | 'off'): Promise<{ first: number[]; full: number[] }> {
  const asked: number[] = [];
  const bot: TelegramTestBot = await startTelegramBot({
    env: { TELEGRAM_ALLOWED_USERS: '111', TELEGRAM_ALLOWED_GROUPS: String(GROUP), STREAMING: mode === 'edit' ? 'draft' : mode, LOG_LEVEL: 'silent' },
    responder: () => {
      asked.push(Date.now());
      // Not streamed, the stub takes as long as the stream would to have the whole answer.
      return { ...text(ANSWER), stream: { chunkChars: 10, paceMs: PACE_MS }, ...(mode === 'off' ? { delayMs: STREAM_MS } : {}) };
    },
  });
  const first: number[] = [];
  const full: number[] = [];
  // Edit mode is what groups get: drafts are for private chats only.
  const chat = mode === 'edit' ? GROUP : 111;
  const user = mode === 'edit' ? bot.tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Bench' }) : bot.tg.user({ userId: 111 });
  try {
    for (let i = 0; i < TURNS; i++) {
      const from = bot.tg.calls.length;
      const done = () => bot.tg.botMessages(chat).filter((m) => m.parseMode === 'HTML').length > i;
      await user.say(mode === 'edit' ? `@TestNameBot question ${i}` : `question ${i}`);
      await waitFor(done, 60_000, `answer ${i}`);
      // Without streaming there are no pieces: the first would have gone out one pace after the request.
      const stream = bot.llm.streams[i] ?? { firstTextAt: asked[i]! + PACE_MS, endedAt: asked[i]! + STREAM_MS };
      const calls = bot.tg.calls.slice(from).filter((c) => String(c.body?.chat_id) === String(chat));
      const shown = calls.find((c) => c.method === 'sendMessageDraft' || c.method === 'sendMessage')!;
      const last = calls.filter((c) => (c.method === 'sendMessage' || c.method === 'editMessageText') && c.body.parse_mode === 'HTML').at(-1)!;
      first.push(shown.at - stream.firstTextAt!);
      full.push(last.at - stream.endedAt!);
      await new Promise((r) => setTimeout(r, 1600)); // the chat's edit pace, so turns do not wait on each other
    }
  } finally {
    await bot.close();
  }
  return { first, full };
}

export async function benchStream(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const label = `(${ANSWER.length} characters streamed over ~${(STREAM_MS / 1000).toFixed(1)} s)`;
  const draft = await run('draft');
  out[`streaming, private chat (drafts): first visible text − first token ${label}`] = fmt(draft.first);
  out[`streaming, private chat (drafts): finished message − last token`] = fmt(draft.full);
  const edit = await run('edit');
  out[`streaming, group (edited placeholder): first visible text − first token`] = fmt(edit.first);
  out[`streaming, group (edited placeholder): final edit − last token`] = fmt(edit.full);
  const off = await run('off');
  out[`STREAMING=off: first visible text (the whole answer) − first token`] = fmt(off.first);
  return out;
}
