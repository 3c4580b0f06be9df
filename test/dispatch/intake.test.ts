/**
 * The intake (src/dispatch/intake.ts) on real parts — journal, dispatcher, session store in a
 * temp dir — with a small stand-in pipeline: recovery of what an earlier run left open, giving
 * up after MAX_RECOVERY_ATTEMPTS restarts, and the one failure wrap (one apology; the entry closed only when
 * the message's words are safe).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Intake, MAX_RECOVERY_ATTEMPTS } from '../../src/dispatch/intake.js';
import { FileInbox } from '../../src/queue/file-inbox.js';
import { Dispatcher } from '../../src/queue/dispatcher.js';
import { ChatLimits } from '../../src/dispatch/limits.js';
import { FileSessionStore } from '../../src/sessions/file-store.js';
import { makeMessage } from '../../src/sessions/model.js';
import { CommandRouter } from '../../src/dispatch/router.js';
import { AppError } from '../../src/core/errors.js';
import { deliver, type Turn } from '../../src/turn/turn.js';
import { textReply, type Reply } from '../../src/core/channel.js';
import type { InboundMessage } from '../../src/core/message.js';
import { captureLog, tempDir, type CapturedLog } from '../helpers/workspace.js';
import { waitFor } from '../helpers/wait.js';

interface Rig {
  intake: Intake;
  sessions: FileSessionStore;
  inbox: FileInbox;
  logs: CapturedLog;
  /** Messages the stand-in pipeline was run for. */
  turns: string[];
  replies: string[];
  handle(words: string, messageId: string): Promise<void>;
  recover(): Promise<number>;
  open(): Promise<string[]>;
  close(): Promise<void>;
}

/** The stand-in pipeline answers "echo: …" and saves the answer, as ToolLoop and ResponseDelivery do. */
type Behaviour = (turn: Turn) => Promise<void>;
const echo: Behaviour = async (turn) => {
  turn.response = `echo: ${turn.inbound.text}`;
  turn.answer = makeMessage('assistant', turn.response);
  await turn.calls?.answering();
  await turn.writes.append(turn.answer);
  await turn.calls?.replying();
  await deliver(turn, turn.response);
};

function message(words: string, messageId: string): InboundMessage {
  return { channel: 'test', chatId: '1', userId: 'u1', userName: 'Tester', text: words, messageId, receivedAt: new Date('2026-11-20T10:00:00Z') };
}

/** `inbox`, `reply`: the rig's own by default (a FileInbox in the workspace; replies in `replies`). */
async function rig(
  workspace: string,
  behaviour: Behaviour = echo,
  commands: CommandRouter = new CommandRouter([]),
  own: { inbox?: FileInbox; reply?: Reply } = {},
): Promise<Rig> {
  const logs = captureLog();
  const dispatcher = new Dispatcher(4);
  const sessions = new FileSessionStore(path.join(workspace, 'sessions'), logs.log, { inUse: (id) => dispatcher.busy(id) });
  await sessions.init();
  const inbox = own.inbox ?? new FileInbox(path.join(workspace, 'inbox.jsonl'));
  const turns: string[] = [];
  const replies: string[] = [];
  const reply =
    own.reply ??
    textReply(async (t) => {
      replies.push(t);
    });
  const intake = await Intake.open({
    config: { maxMessageChars: 10_000, turnTimeoutMs: 60_000, rateLimitPerMinute: 0, albumWaitMs: 0, dailyTokenBudget: 0 },
    inbox,
    dispatcher,
    limits: new ChatLimits(0, 100),
    sessions,
    budget: { blocks: async () => false, refusal: async () => '' },
    commands,
    pipeline: {
      async run(turn) {
        turns.push(turn.inbound.text);
        await behaviour(turn);
        if (turn.response !== undefined && turn.answer === undefined) await turn.writes.append(makeMessage('assistant', turn.response));
      },
    },
    measured: () => undefined,
    log: logs.log,
  });
  return {
    intake,
    sessions,
    inbox,
    logs,
    turns,
    replies,
    handle: (words, id) => intake.handle(message(words, id), reply),
    recover: () => intake.recover(() => reply),
    open: async () => (await new FileInbox(inbox.file).unfinished()).entries.map((e) => e.msg.text),
    async close() {
      await sessions.close();
      await inbox.shutdown();
    },
  };
}

/** What a killed run leaves: `msg` accepted, its handling started `starts` times, never done. */
async function leftOpen(workspace: string, msg: InboundMessage, starts: number): Promise<void> {
  const earlier = new FileInbox(path.join(workspace, 'inbox.jsonl'));
  const { id, durable } = earlier.accept(msg);
  await durable;
  await earlier.shutdown();
  for (let i = 0; i < starts; i++) await appendFile(earlier.file, `${JSON.stringify({ t: 'start', id })}\n`);
}

async function sessionContents(workspace: string): Promise<string[]> {
  const file = JSON.parse(await readFile(path.join(workspace, 'sessions', 'test:1.json'), 'utf8'));
  return file.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);
}

test('recovery: a message the last run accepted and never answered is answered once, and its entry closed', async () => {
  const ws = await tempDir();
  await leftOpen(ws.dir, message('left behind', '7'), 1);
  const r = await rig(ws.dir);
  try {
    assert.equal(await r.recover(), 1);
    assert.equal(await r.recover(), 0, 'taken over once');
    assert.deepEqual(r.turns, ['left behind']);
    assert.deepEqual(r.replies, ['echo: left behind']);
    await r.sessions.flush();
    assert.deepEqual(await sessionContents(ws.dir), ['user: left behind', 'assistant: echo: left behind']);
    assert.deepEqual(await r.open(), []);
  } finally {
    await r.close();
    await ws.cleanup();
  }
});

/** "asked once" answered by a first run, then its journal as a kill at some point would have left it (`cut`: the lines kept). */
async function answeredThenKilled(workspace: string, cut: (journal: string) => string): Promise<void> {
  const first = await rig(workspace);
  await first.handle('asked once', '8');
  await first.close();
  const journal = path.join(workspace, 'inbox.jsonl');
  await writeFile(journal, cut(await readFile(journal, 'utf8')));
}

test('recovery: a message whose answer reached the session and the channel before the kill is not answered again', async () => {
  const ws = await tempDir();
  // The kill came after the answer was sent and before its entry closed: the journal without its done line.
  await answeredThenKilled(ws.dir, (j) => j.replace(/^.*"t":"done".*\n/m, ''));
  const r = await rig(ws.dir);
  try {
    assert.equal(await r.recover(), 1);
    assert.deepEqual(r.turns, [], 'the pipeline did not run');
    assert.deepEqual(r.replies, [], 'no second reply');
    assert.deepEqual(await r.open(), []);
  } finally {
    await r.close();
    await ws.cleanup();
  }
});

test('risk: a message whose answer reached the session but not the channel before the kill stays unanswered — the saved answer is sent, once, the pipeline not run again', async () => {
  const ws = await tempDir();
  // The kill came after the answer was saved and before it was handed to the channel: its mark, no reply mark, no done line.
  await answeredThenKilled(ws.dir, (j) => j.replace(/^.*"t":"done".*\n/m, '').replace(/^.*"tool":"\(reply\)".*\n/m, ''));
  const r = await rig(ws.dir);
  try {
    assert.equal(await r.recover(), 1);
    assert.deepEqual(r.turns, [], 'the pipeline did not run');
    assert.deepEqual(r.replies, ['echo: asked once'], 'the saved answer');
    assert.deepEqual(await r.open(), []);
    assert.equal(await r.recover(), 0, 'and only once');
  } finally {
    await r.close();
    await ws.cleanup();
  }
});

test(`give-up: a message started ${MAX_RECOVERY_ATTEMPTS} times is not run again; its words are saved and the user told; one start fewer still runs`, async () => {
  const ws = await tempDir();
  await leftOpen(ws.dir, message('poison', '9'), MAX_RECOVERY_ATTEMPTS);
  const r = await rig(ws.dir);
  try {
    await r.recover();
    assert.deepEqual(r.turns, []);
    assert.equal(r.replies.length, 1);
    assert.match(r.replies[0]!, new RegExp(`failed ${MAX_RECOVERY_ATTEMPTS} times in a row .*It is saved; send it again`));
    await r.sessions.flush();
    assert.deepEqual(await sessionContents(ws.dir), ['user: poison']);
    assert.deepEqual(await r.open(), []);
  } finally {
    await r.close();
    await ws.cleanup();
  }

  const ws2 = await tempDir();
  await leftOpen(ws2.dir, message('almost poison', '10'), MAX_RECOVERY_ATTEMPTS - 1);
  const r2 = await rig(ws2.dir);
  try {
    await r2.recover();
    assert.deepEqual(r2.turns, ['almost poison']);
    assert.deepEqual(r2.replies, ['echo: almost poison']);
  } finally {
    await r2.close();
    await ws2.cleanup();
  }
});

test("a failure outside the pipeline's wrap point gets one apology and leaves the entry open for the next start; its deadline timer does not keep the process alive", async () => {
  const ws = await tempDir();
  const r = await rig(ws.dir, async () => {
    throw new AppError('storage.write_failed', { action: 'write', target: 'the session', reason: 'disk full' });
  });
  // What keeps the event loop alive (unref'd timers do not count): left behind by the turn, a
  // daemon without its final process.exit(), or this file's process, waits TURN_TIMEOUT_MS.
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  try {
    const before = timers();
    await r.handle('hello', '11');
    assert.equal(timers(), before, 'no timer of the ended turn is left');
    assert.equal(r.replies.length, 1);
    const id = /error id ([0-9a-f]+)/.exec(r.replies[0]!)?.[1];
    assert.ok(id, r.replies[0]);
    assert.ok(r.logs.lines().some((l) => l.level === 50 && l.errorId === id && l.msg === 'message could not be handled'));
    assert.deepEqual(await r.open(), ['hello'], 'retried at the next start');
  } finally {
    await r.close();
    await ws.cleanup();
  }
});

test('a turn the runner marked failed gets one apology under the turn id; the words are saved and the entry closed', async () => {
  const ws = await tempDir();
  let turnId = '';
  const r = await rig(ws.dir, async (turn) => {
    turnId = turn.id;
    turn.failure = { system: 'ToolLoop', errorId: turn.id, code: 'llm.unavailable' };
  });
  try {
    await r.handle('are you there', '12');
    assert.deepEqual(r.replies, [
      `Sorry, something went wrong while answering (error id ${turnId}). The language model is not answering right now. Please try again in a minute.`,
    ]);
    await r.sessions.flush();
    assert.deepEqual(await sessionContents(ws.dir), ['user: are you there']);
    assert.deepEqual(await r.open(), []);
  } finally {
    await r.close();
    await ws.cleanup();
  }
});

test('a command is closed before it runs; one that throws gets one apology and a log line naming it', async () => {
  const ws = await tempDir();
  const ran: string[] = [];
  let inbox: FileInbox | undefined;
  const commands = new CommandRouter([
    {
      name: 'boom',
      description: 'fails',
      access: 'everyone',
      async run() {
        ran.push('boom');
        assert.deepEqual((await new FileInbox(inbox!.file).unfinished()).entries, [], 'closed before it runs');
        throw new Error('exploded');
      },
    },
  ]);
  const r = await rig(ws.dir, echo, commands);
  inbox = r.inbox;
  try {
    await r.handle('/boom', '13');
    await r.handle('/nope', '14');
    assert.deepEqual(ran, ['boom']);
    assert.equal(r.replies.length, 2);
    assert.match(r.replies[0]!, /^Sorry, something went wrong while answering \(error id [0-9a-f]+\)\. Please try again/);
    assert.equal(r.replies[1], 'Unknown command /nope. Send /help to see what I understand.');
    assert.ok(
      r.logs.lines().some((l) => l.level === 50 && l.msg === 'command /boom failed'),
      r.logs.text(),
    );
    assert.deepEqual(r.turns, []);
  } finally {
    await r.close();
    await ws.cleanup();
  }
});

/** A journal whose writes become durable only when the test says so (a slow disk's fsync). */
class SlowDiskInbox extends FileInbox {
  private release!: () => void;
  private readonly fsynced = new Promise<void>((resolve) => (this.release = resolve));
  override accept(msg: InboundMessage): { id: string; durable: Promise<void> } {
    const { id, durable } = super.accept(msg);
    return { id, durable: durable.then(() => this.fsynced) };
  }
  fsync(): void {
    this.release();
  }
}

test('nothing of a message reaches the chat before the message is journaled — its aside, its answer and a file alike — then each once, in order', async () => {
  const ws = await tempDir();
  const inbox = new SlowDiskInbox(path.join(ws.dir, 'inbox.jsonl'));
  const sent: string[] = [];
  const reply: Reply = {
    documents: true,
    async send(out) {
      sent.push(out.kind === 'document' ? `document: ${out.document.filename}` : `${out.kind}: ${out.text}`);
    },
  };
  const heard: Behaviour = async (turn) => {
    await turn.reply.send({ kind: 'aside', text: '🎤 heard you' });
    await echo(turn);
  };
  const commands = new CommandRouter([
    {
      name: 'file',
      description: 'sends a file',
      access: 'everyone',
      async run({ document }) {
        await document!({ filename: 'notes.md', content: Buffer.from('# notes') });
        return 'sent the file';
      },
    },
  ]);
  const r = await rig(ws.dir, heard, commands, { inbox, reply });
  try {
    const answered = r.handle('hello', '21');
    const filed = r.handle('/file', '22');
    await waitFor(() => r.turns.length === 1, 10_000, 'the turn runs while the journal write is under way');
    assert.deepEqual(sent, [], 'nothing went out before the fsync');
    inbox.fsync();
    await Promise.all([answered, filed]);
    assert.deepEqual(sent, ['aside: 🎤 heard you', 'text: echo: hello', 'document: notes.md', 'text: sent the file']);
  } finally {
    await r.close();
    await ws.cleanup();
  }
});

/** A message given up after restarts, as the journal and the session have it once the user was told. */
async function givenUp(workspace: string, poison: InboundMessage): Promise<void> {
  await leftOpen(workspace, poison, MAX_RECOVERY_ATTEMPTS);
  const first = await rig(workspace);
  await first.recover();
  assert.equal(first.replies.length, 1, 'given up, the user told');
  await first.close();
}

const later = (m: InboundMessage, ms: number): InboundMessage => ({ ...m, receivedAt: new Date(m.receivedAt.getTime() + ms) });

test('risk: a copy of a message given up after restarts (Telegram sent its update again after a kill) is run at the next start, so that message can kill the daemon again — closed with it, without a turn', async () => {
  const ws = await tempDir();
  const poison = message('poison', '9');
  // What the kills left: the message started MAX times, and a copy of it never started — Telegram
  // sent its update again because a kill came before the update id was recorded.
  await leftOpen(ws.dir, poison, MAX_RECOVERY_ATTEMPTS);
  await leftOpen(ws.dir, later(poison, 5000), 0);
  const r = await rig(ws.dir);
  try {
    await r.recover();
    assert.deepEqual(r.turns, [], 'the message is not run again, through no copy');
    assert.equal(r.replies.length, 1, `one reply, the give-up line: ${JSON.stringify(r.replies)}`);
    assert.match(r.replies[0]!, new RegExp(`failed ${MAX_RECOVERY_ATTEMPTS} times in a row`));
    await r.sessions.flush();
    assert.deepEqual(await sessionContents(ws.dir), ['user: poison']);
    assert.deepEqual(await r.open(), [], 'every entry of it closed');
  } finally {
    await r.close();
    await ws.cleanup();
  }
});

test('risk: a copy of a message given up after restarts arriving in the same run is run — closed without a turn or a second reply', async () => {
  const ws = await tempDir();
  const poison = message('poison', '9');
  await leftOpen(ws.dir, poison, MAX_RECOVERY_ATTEMPTS);
  const r = await rig(ws.dir);
  try {
    await r.recover();
    // Telegram sends it again after the give-up: its update id was never recorded.
    await r.intake.handle(
      later(poison, 9000),
      textReply(async (t) => void r.replies.push(t)),
    );
    assert.deepEqual(r.turns, [], 'not run');
    assert.equal(r.replies.length, 1, `one reply, the give-up line: ${JSON.stringify(r.replies)}`);
    assert.deepEqual(await r.open(), []);
  } finally {
    await r.close();
    await ws.cleanup();
  }
});

test('risk: a copy left open in the journal of a message an earlier run gave up on is run at the next start — closed without a turn or a reply', async () => {
  const ws = await tempDir();
  const poison = message('poison', '9');
  await givenUp(ws.dir, poison);
  // The copy came after the give-up, and that run was killed before it was handled.
  await leftOpen(ws.dir, later(poison, 5000), 0);
  const r = await rig(ws.dir);
  try {
    await r.recover();
    assert.deepEqual(r.turns, [], 'not run');
    assert.deepEqual(r.replies, [], 'no second reply');
    assert.deepEqual(await r.open(), []);
  } finally {
    await r.close();
    await ws.cleanup();
  }
});
