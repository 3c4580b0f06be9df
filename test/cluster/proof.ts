/**
 * The cluster proof's model and checks (daemons.pg.test.ts): the fake model that sets reminders
 * when asked, and what the test reads back — the reminders set and seen, the sessions kept.
 */
import type pg from 'pg';
import { text, toolCalls, type RecordedRequest } from '../helpers/fake-llm.js';
import type { KeptSession } from '../faults/crash-run.js';

/** A user's request for a reminder, and the reminder's text (unique: the chat and the request's number). */
export const REMIND = /^remind (r\d+ of \d+) in (\d+)s$/;

type Msg = { role: string; content: unknown; tool_calls?: unknown[] };
/** The user message this round of a turn is for: the last one (a tool round comes after it). */
function turnUserText(msgs: Msg[]): string {
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i]!.role === 'user') return String(msgs[i]!.content);
  return '';
}

/**
 * The model: "remind r<k> of <user> in <n>s" gets a schedule_message call due n seconds from now; the round
 * after the tool (or any other message) is answered "echo: <the user's message>", so the test's
 * accounting of answers is the same for every message. A tool result saying the call was not run
 * (the process died in it, features/answer/loop.ts) is noted: that reminder may never be set.
 */
export function clusterModel(notRun: Set<string>) {
  return (req: RecordedRequest) => {
    const msgs = req.body.messages as Msg[];
    const said = turnUserText(msgs);
    const delayMs = 50 + Math.floor(Math.random() * 250);
    const last = msgs.at(-1)!;
    if (last.role === 'tool') {
      if (String(last.content).startsWith('Not run:')) notRun.add(said);
      return { ...text(`echo: ${said}`), delayMs };
    }
    const r = REMIND.exec(said);
    if (r && last.role === 'user')
      return {
        ...toolCalls([{ name: 'schedule_message', args: { at: new Date(Date.now() + Number(r[2]) * 1000).toISOString(), text: `rem ${r[1]}` } }]),
        delayMs,
      };
    return { ...text(`echo: ${said}`), delayMs };
  };
}

/** The apology of a message given up after it was running at MAX_RECOVERY_ATTEMPTS kills (dispatch/intake.ts). */
export const GIVEN_UP = /^Answering your message failed \d+ times in a row/;

/** True when the session kept holds `text` followed by its answer (the model's echo). */
export function answerKept(sessions: KeptSession[], chatId: string, text: string): boolean {
  const msgs = sessions.find((s) => s.chatId === chatId)?.messages ?? [];
  const i = msgs.findIndex((m) => m.role === 'user' && m.content === text);
  return i >= 0 && msgs.slice(i + 1).some((m) => m.role === 'assistant' && m.content === `echo: ${text}`);
}

/** A reminder by its chat and text: `<chat id>/rem r<k> of <user>`. */
export const reminderKey = (request: string) => {
  const what = REMIND.exec(request)![1]!;
  return `${/of (\d+)$/.exec(what)![1]}/rem ${what}`;
};

/** The reminders the store holds (any status), by key. */
export async function remindersSet(db: pg.Client) {
  const { rows } = await db.query<{ chat_id: string; text: string; status: string; due_at: string }>(
    'SELECT chat_id, text, status, due_at FROM reminders ORDER BY id',
  );
  return rows.map((r) => ({ key: `${r.chat_id}/${r.text}`, text: r.text, status: r.status, dueAt: Number(r.due_at) }));
}

/** How many times each reminder reached a chat (by key): the bot's "⏰" messages (one alone, or folded with others). */
export function remindersSeen(messages: Array<{ chatId: string; text: string }>): Map<string, number> {
  const seen = new Map<string, number>();
  for (const m of messages)
    if (m.text.startsWith('⏰')) for (const t of m.text.match(/rem r\d+ of \d+/g) ?? []) seen.set(`${m.chatId}/${t}`, (seen.get(`${m.chatId}/${t}`) ?? 0) + 1);
  return seen;
}

/**
 * What is wrong with the sessions kept: per chat, its user messages must be the messages the bot
 * took, once each, in the order sent, each followed by its answer alone (tool rounds and
 * reminders between are fine), and each reminder set in the chat must be in it once.
 */
export function sessionFaults(
  sessions: KeptSession[],
  sentPerChat: Map<number, string[]>,
  taken: Map<string, unknown>,
  reminders: string[],
  givenUp: string[] = [],
): string[] {
  const wrong: string[] = [];
  for (const [chat, said] of sentPerChat) {
    const msgs = sessions.find((x) => x.chatId === String(chat))?.messages ?? [];
    const expected = said.filter((t) => taken.has(t));
    const users = msgs.filter((m) => m.role === 'user').map((m) => m.content);
    if (JSON.stringify(users) !== JSON.stringify(expected)) {
      let at = 0;
      while (at < Math.max(users.length, expected.length) && users[at] === expected[at]) at++;
      wrong.push(`chat ${chat}: ${users.length} user messages, ${expected.length} taken; first difference at ${at}: ${users[at]} / ${expected[at]}`);
    }
    msgs.forEach((m, i) => {
      if (m.role !== 'user') return;
      const next = msgs.findIndex((n, j) => j > i && n.role === 'user');
      const answers = msgs
        .slice(i + 1, next === -1 ? undefined : next)
        .filter((a) => a.role === 'assistant' && !a.reminder && !(a.toolCalls && a.toolCalls.length > 0))
        .map((a) => a.content);
      const want = givenUp.includes(m.content) ? [] : [`echo: ${m.content}`];
      if (JSON.stringify(answers) !== JSON.stringify(want)) wrong.push(`chat ${chat}: "${m.content}" answered ${JSON.stringify(answers)}`);
    });
    for (const key of reminders.filter((k) => k.startsWith(`${chat}/`))) {
      const text = key.slice(key.indexOf('/') + 1);
      const n = msgs.filter((m) => m.reminder && m.content.includes(text)).length;
      if (n !== 1) wrong.push(`chat ${chat}: reminder "${text}" ${n} times in the session`);
    }
  }
  return wrong;
}
