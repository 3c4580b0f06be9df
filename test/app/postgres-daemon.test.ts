/**
 * Issue 35's "Done when": the real daemon (src/main.ts) with DATABASE_URL on a throwaway cluster
 * answers through the Telegram stand-in with a fresh, empty WORKSPACE_DIR at each start, and
 * keeps nothing there it cannot rebuild from the database: a user tells it something; after a
 * stop and a start on another empty workspace, the conversation and the memory are there (the
 * model sees them in its prompt, and the answer says so); and another process, started after
 * with an empty workspace of its own, finds the same memory.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { startTelegramEmulator, type TelegramEmulator } from '../helpers/telegram.js';
import {
  lastUserText,
  memoryAwareResponder,
  promptKind,
  startFakeLlm,
  text,
  toolCalls,
  toolResults,
  type FakeLlm,
  type RecordedRequest,
} from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { childEnv, mainTs, runToEnd, startDaemonChild, telegramDaemonEnv, tsxLoader } from '../helpers/child.js';
import { patient } from '../helpers/wait.js';

const USER = 111;
const CAT = 'Zephyrine';
const TOLD = `Remember this: my cat is named ${CAT}.`;
const ASKED = 'Do you remember the name of my cat?';

/** Everything the model was sent for one request, as one text. */
const promptOf = (req: RecordedRequest) => JSON.stringify(req.body.messages);

/**
 * A cooperative model: told something to remember, it saves it with both memory tools (a fact in
 * the index, a line in MEMORY.md); asked, it answers with what its prompt holds of it.
 */
function responder(req: RecordedRequest) {
  if (promptKind(req) !== 'chat') return memoryAwareResponder(req, 0);
  if (lastUserText(req).startsWith('Remember this')) {
    if (toolResults(req).length === 0)
      return toolCalls([
        { name: 'remember_fact', args: { fact: `The name of the user's cat is ${CAT}.` } },
        { name: 'memory_add', args: { fact: `The user's cat is named ${CAT}.` } },
      ]);
    return text(`Noted: your cat is ${CAT}.`);
  }
  return text(promptOf(req).includes(CAT) ? `Your cat is ${CAT}.` : 'I do not know the name of your cat.');
}

let cluster: PgCluster;
let tg: TelegramEmulator;
let llm: FakeLlm;
before(async () => {
  cluster = await startPg();
  tg = await startTelegramEmulator();
  llm = await startFakeLlm(responder);
});
after(async () => {
  await tg?.close();
  await llm?.close();
  await cluster?.stop();
});

/** The chat requests whose last user message is `said` (the answering call, not the tool rounds before it). */
const answering = (said: string) => llm.chatRequests().filter((r) => promptKind(r) === 'chat' && lastUserText(r) === said && toolResults(r).length === 0);

test('DATABASE_URL, a fresh empty workspace each start: the bot answers, and after a restart the conversation and memory are there; a second process with an empty workspace finds the same memory', {
  timeout: patient(240_000),
}, async () => {
  const url = await cluster.createDatabase();
  const workspaces = [await tempDir('membot-pg-run1-'), await tempDir('membot-pg-run2-'), await tempDir('membot-pg-run3-')];
  // One memory for every chat (MEMORY_SCOPE=global): the second process talks on another channel.
  const shared = { DATABASE_URL: url, MEMORY_SCOPE: 'global' };
  const env = (ws: string) =>
    telegramDaemonEnv({ llmUrl: llm.url, workspace: ws, tg }, { ...shared, TELEGRAM_ALLOWED_USERS: String(USER), TELEGRAM_DM_POLICY: 'allowlist' });
  const user = tg.user({ userId: USER });
  let daemon = startDaemonChild(env(workspaces[0]!.dir), workspaces[0]!.dir);
  const stop = async () => {
    daemon.child.kill('SIGTERM');
    if (daemon.child.exitCode === null) await new Promise((r) => daemon.child.once('close', r));
  };
  try {
    // First run: the user tells the bot something, the bot saves it and answers.
    await daemon.started;
    await user.say(TOLD);
    const first = await tg.waitForBotMessages(USER, 1, patient(60_000));
    assert.equal(first[0]?.text, `Noted: your cat is ${CAT}.`, 'the bot answers through Telegram with DATABASE_URL set');
    await stop();
    assert.equal(daemon.child.exitCode, 0, `a clean stop:\n${daemon.log()}`);

    // Second run, another empty workspace: the same bot, the same user.
    daemon = startDaemonChild(env(workspaces[1]!.dir), workspaces[1]!.dir);
    await daemon.started;
    await user.say(ASKED);
    await tg.waitForBotMessages(USER, 2, patient(60_000));
    const [asked] = answering(ASKED);
    assert.ok(asked, 'the question reached the model');
    const failures: string[] = [];
    const check = (ok: boolean, what: string) => ok || failures.push(what);
    // What the user notices: the bot remembers. Each place it could remember from, apart.
    check(tg.botMessages(USER)[1]?.text === `Your cat is ${CAT}.`, 'after the restart the bot answers with what the user told it');
    check(
      (asked.body.messages as Array<{ role: string; content: unknown }>).some((m) => m.role === 'user' && String(m.content).includes(TOLD)),
      'the conversation is there: the earlier message is in the history the model reads (sessions)',
    );
    // Not in this prompt's `# Relevant Memory`: that section leaves out what the conversation the
    // history carries already holds (the same conversation, resumed). The second process below,
    // on a chat with no history, finds it there.
    check(promptOf(asked).includes(`The user's cat is named ${CAT}.`), 'the MEMORY.md line is in the prompt (memory files)');

    // A second process, started after with an empty workspace of its own, while the first runs:
    // the terminal channel (piped), so the two do not share Telegram's updates.
    const third = await runToEnd(process.execPath, ['--import', tsxLoader, mainTs], {
      cwd: workspaces[2]!.dir,
      env: childEnv({
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: 'sk-test-key-123456',
        WORKSPACE_DIR: workspaces[2]!.dir,
        ...shared,
        LOG_LEVEL: 'warn',
      }),
      input: `${ASKED}\n/status\n`,
    });
    assert.equal(third.code, 0, `the second process ran:\n${third.stderr}`);
    const [reply, ...status] = third.stdout.split('\n');
    assert.match(
      status.join('\n'),
      new RegExp(`Database: PostgreSQL at 127\\.0\\.0\\.1:\\d+${new URL(url).pathname}: up since `),
      `/status names the database:\n${third.stdout}\n${third.stderr}`,
    );
    assert.doesNotMatch(third.stdout + third.stderr, new RegExp(cluster.password), 'never the password');
    const asked3 = answering(ASKED).at(-1)!;
    check(asked3 !== asked, 'the second process asked the model');
    check(/# Relevant Memory[^#]*Zephyrine/.test(promptOf(asked3)), "a second process: the saved fact is in its prompt's relevant memory (the memory index)");
    check(reply === `Your cat is ${CAT}.`, 'a second process: its answer says what the user told the first');
    await stop();
    assert.deepEqual(failures, [], 'everything the user told the bot is there after the restart and in a second process');
  } finally {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
    for (const ws of workspaces) await ws.cleanup();
  }
});
