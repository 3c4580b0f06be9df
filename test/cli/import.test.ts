/**
 * `npm run memory -- import --from openclaw|hermes|nanobot|membot PATH --chat CHANNEL:ID`, run
 * as a child like a user runs it, on small folders written here in each assistant's own layout:
 * what comes in reaches the daemon's prompt (the fake LLM sees it), search_memory finds a daily
 * line by its date, a second import adds nothing, the daemon's lock refuses it, and a /export
 * imported into a fresh chat gives back the same files byte for byte and the same search results.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot } from '../helpers/app.js';
import { echoResponder, lastUserText, promptKind, text, toolCalls, toolResults, type Responder } from '../helpers/fake-llm.js';
import { memoryCli, type CliRun } from '../helpers/child.js';
import { tempDir } from '../helpers/workspace.js';
import { waitFor } from '../helpers/wait.js';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { silentLogger } from '../../src/core/log.js';

async function put(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, body] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), body);
  }
}

/** The import as a user runs it. Not asserted here: a test's `prepare` that throws would leave its fake LLM running. */
function importInto(ws: string, from: string, dir: string, chat = 'test:1'): Promise<CliRun> {
  return memoryCli(['import', '--from', from, dir, '--chat', chat], { WORKSPACE_DIR: ws });
}

/** The report of an import that succeeded. */
function reportOf(r: CliRun | undefined): string {
  assert.equal(r?.code, 0, `${r?.stdout}\n${r?.stderr}`);
  return r!.stdout;
}

/** Every file of a chat's memory folder but its versions, by name. */
async function memoryFiles(ws: string, chat: string): Promise<Map<string, string>> {
  const dir = path.join(ws, 'memory', chat);
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { withFileTypes: true })) if (e.isFile()) out.set(e.name, (await readFile(path.join(dir, e.name))).toString('base64'));
  return out;
}

/** First chat request: search_memory with `query`; then the echo. */
function searching(query: string): Responder {
  return (req, i) => {
    if (promptKind(req) !== 'chat') return echoResponder(req, i);
    if (lastUserText(req).startsWith('search') && toolResults(req).length === 0) return toolCalls([{ name: 'search_memory', args: { query } }]);
    return text('ok');
  };
}

const OPENCLAW = {
  'MEMORY.md':
    '# Long-term memory\n\n## People\n- Marta lives in Braga.\n- Sister Ana plays chess on Sundays.\n\n## Preferences\nPrefers green tea over coffee.\n',
  'memory/2026-03-01.md': '# 2026-03-01\n\n- 09:30 Booked the dentist for Marta\n- Bought a blue kettle\n',
  'memory/2026-03-05.md': '- Bought a red kettle at the flea market\n- Bought a red kettle at the flea market\n',
  'memory/2026-03-05-garden.md': '- Planted tomatoes by the wall\n',
  'memory/context-digest.md': '# Open items\n- none\n',
  'SOUL.md': 'You are a crab.\n',
};

test("risk: another assistant's memory cannot move here — an OpenClaw workspace comes in whole: MEMORY.md merged as one version, each day a note of its date, the model sees it and finds a day's line by its date; twice adds nothing", async () => {
  const src = await tempDir();
  let first: CliRun | undefined;
  let second: CliRun | undefined;
  let beforeSecond: Map<string, string> | undefined;
  const bot = await startTestBot({
    responder: searching('kettle on 2026-03-05'),
    prepare: async (ws) => {
      await put(src.dir, OPENCLAW);
      await symlink('/etc/hostname', path.join(src.dir, 'memory', '2026-03-09.md'));
      // The chat already has a memory and a note on one of those days: kept, added to.
      await put(path.join(ws, 'memory', 'test:1'), { 'MEMORY.md': '- Likes plums.\n', '2026-03-05.md': '[10:00] User: hi | Assistant: hello\n' });
      first = await importInto(ws, 'openclaw', src.dir);
      beforeSecond = await memoryFiles(ws, 'test:1');
      second = await importInto(ws, 'openclaw', src.dir);
    },
  });
  try {
    const ws = bot.workspace;
    const out = reportOf(first);
    assert.match(out, /MEMORY\.md: 3 entries added, 0 already there/);
    assert.match(out, /note 2026-03-01: 3 lines \(a new note\)/);
    assert.match(out, /note 2026-03-05: 3 lines \(appended to the chat's note of that day\)/);
    assert.match(out, /index: 5 episodes, 3 facts saved; 0 already there/);
    assert.match(out, /memory\/2026-03-09\.md: a link to outside PATH/);
    assert.match(out, /memory\/context-digest\.md: not a daily note/);
    assert.match(out, /SOUL\.md: the assistant's persona/);

    // Nothing dropped, nothing overwritten, the repeated line kept twice, the heading kept as a line.
    const dir = path.join(ws, 'memory', 'test:1');
    assert.equal(
      await readFile(path.join(dir, '2026-03-05.md'), 'utf8'),
      '[10:00] User: hi | Assistant: hello\n[imported from OpenClaw: memory/2026-03-05-garden.md]\n- Planted tomatoes by the wall\n[imported from OpenClaw: memory/2026-03-05.md]\n- Bought a red kettle at the flea market\n- Bought a red kettle at the flea market\n',
    );
    assert.equal(
      await readFile(path.join(dir, '2026-03-01.md'), 'utf8'),
      '[imported from OpenClaw: memory/2026-03-01.md]\n\\# 2026-03-01\n- 09:30 Booked the dentist for Marta\n- Bought a blue kettle\n',
    );
    assert.equal(
      await readFile(path.join(dir, 'MEMORY.md'), 'utf8'),
      '- Likes plums.\n\n## People\n- Marta lives in Braga.\n- Sister Ana plays chess on Sundays.\n\n## Preferences\n- Prefers green tea over coffee.\n',
    );

    // The second import: every entry, line and row found already; not one byte changed.
    assert.match(reportOf(second), /MEMORY\.md: 0 entries added, 3 already there/);
    assert.match(reportOf(second), /note 2026-03-05: 0 lines, 3 already there/);
    assert.match(reportOf(second), /index: 0 episodes, 0 facts saved; 8 already there/);
    assert.deepEqual(await memoryFiles(ws, 'test:1'), beforeSecond);

    // The daemon: MEMORY.md's entries in the prompt, the day's line found by its date.
    await bot.send('1', 'search my memory please');
    const chat = bot.llm.chatRequests().filter((r) => promptKind(r) === 'chat');
    assert.match(String(chat[0]!.body.messages[0].content), /Marta lives in Braga\./);
    const found = toolResults(chat.at(-1)!).find((r) => r.name === 'search_memory')!.content;
    assert.match(found.split('\n')[0]!, /^\[ep_\w+\] 2026-03-05 12:00 episode \(OpenClaw\): - Bought a red kettle at the flea market$/, found);

    // The merge is one version of MEMORY.md: /memory undo takes it back.
    const [undone] = await bot.send('1', '/memory undo');
    assert.match(undone!, /^Undone: MEMORY\.md is back to version/);
    assert.equal(await readFile(path.join(dir, 'MEMORY.md'), 'utf8'), '- Likes plums.\n');
  } finally {
    await bot.close();
    await src.cleanup();
  }
});

test("risk: Hermes' §-separated entries and nanobot's history come in cut or undated — each entry of MEMORY.md and USER.md whole, each history entry at its own time", async () => {
  const hermes = await tempDir();
  const nanobot = await tempDir();
  let hermesRun: CliRun | undefined;
  let nanobotRun: CliRun | undefined;
  const bot = await startTestBot({
    responder: searching('ferry to Ilha on 2026-04-03'),
    prepare: async (ws) => {
      await put(hermes.dir, {
        'memories/MEMORY.md': 'Project uses pnpm, not npm.\n§\nDeploys go out on Fridays\nafter the 14:00 standup.\n§\nProject uses pnpm, not npm.\n',
        'memories/USER.md': 'Name: Ines. Calls the cat Miso.\n§\nPrefers short answers.\n',
      });
      hermesRun = await importInto(ws, 'hermes', hermes.dir);
      await put(nanobot.dir, {
        'memory/MEMORY.md': '# Long-term Memory\n\n- Ines is learning Portuguese.\n',
        'memory/history.jsonl':
          '{"cursor": 1, "timestamp": "2026-04-03 18:20", "content": "- Took the ferry to Ilha da Culatra\\n- Booked a guesthouse"}\n' +
          'not json\n' +
          '{"cursor": 2, "timestamp": "2026-04-04 09:00", "content": "Planned the next trip to Tavira"}\n',
        'memory/HISTORY.md': '[2026-02-01 10:00] Talked about the cat vaccine.\n\n[2026-02-02 11:30] Found a vet in Faro.\n\n',
        'SOUL.md': 'I am nanobot.\n',
      });
      nanobotRun = await importInto(ws, 'nanobot', nanobot.dir);
    },
  });
  try {
    assert.match(reportOf(hermesRun), /MEMORY\.md: 4 entries added, 0 already there \(from memories\/MEMORY\.md, memories\/USER\.md;/);
    assert.match(reportOf(nanobotRun), /HISTORY\.md: 4 entries added, 0 already there/);
    assert.match(reportOf(nanobotRun), /memory\/history\.jsonl:2: not JSON/);
    const dir = path.join(bot.workspace, 'memory', 'test:1');
    const memory = await readFile(path.join(dir, 'MEMORY.md'), 'utf8');
    assert.match(
      memory,
      /^## Notes \(from Hermes\)\n- Project uses pnpm, not npm\.\n- Deploys go out on Fridays\n {2}after the 14:00 standup\.\n\n## About the user \(from Hermes\)\n- Name: Ines\. Calls the cat Miso\.\n- Prefers short answers\.\n/,
    );
    assert.match(memory, /- Ines is learning Portuguese\./);
    const history = await readFile(path.join(dir, 'HISTORY.md'), 'utf8');
    assert.match(history, /^## 2026-02-01T10:00:00\.000Z\n\[2026-02-01 10:00\] Talked about the cat vaccine\.\n/m);
    assert.match(history, /^## 2026-04-03T18:20:00\.000Z\n- Took the ferry to Ilha da Culatra\n- Booked a guesthouse\n/m);
    assert.match(await readFile(path.join(dir, 'HISTORY-2026-04.md'), 'utf8'), /Planned the next trip to Tavira/);

    await bot.send('1', 'search for it');
    const chat = bot.llm.chatRequests().filter((r) => promptKind(r) === 'chat');
    const system = String(chat[0]!.body.messages[0].content);
    assert.match(system, /Deploys go out on Fridays\n {2}after the 14:00 standup\./);
    assert.match(system, /Calls the cat Miso/);
    const found = toolResults(chat.at(-1)!).find((r) => r.name === 'search_memory')!.content;
    assert.match(found.split('\n')[0]!, /^\[ep_\w+\] 2026-04-03 18:20 episode \(nanobot\): - Took the ferry to Ilha da Culatra/, found);
  } finally {
    await bot.close();
    await hermes.cleanup();
    await nanobot.cleanup();
  }
});

test('risk: a hostile folder hangs the import, floods memory or reads outside PATH — a FIFO, a huge file, binary, links out are named and left; the rest comes in', async () => {
  const ws = await tempDir();
  const src = await tempDir();
  const outside = await tempDir();
  try {
    await put(src.dir, {
      'MEMORY.md': '- Keeps a fig tree.\n',
      'memory/2026-05-01.md': '- Watered the fig tree\n',
      'memory/2026-05-03.md': `- ${'x'.repeat(8 * 1024 * 1024)}\n`,
    });
    await writeFile(path.join(src.dir, 'memory', '2026-05-04.md'), Buffer.from([0x2d, 0x20, 0xff, 0xfe, 0x00, 0x41]));
    await put(outside.dir, { 'MEMORY.md': '- SECRET-OUTSIDE\n', '2026-05-06.md': '- SECRET-OUTSIDE\n' });
    await symlink(path.join(outside.dir, '2026-05-06.md'), path.join(src.dir, 'memory', '2026-05-06.md'));
    await symlink(outside.dir, path.join(src.dir, 'memory', 'elsewhere'));
    await new Promise<void>((resolve, reject) =>
      spawn('mkfifo', [path.join(src.dir, 'memory', '2026-05-02.md')]).on('close', (code) => (code === 0 ? resolve() : reject(new Error(`mkfifo ${code}`)))),
    );
    const out = reportOf(await importInto(ws.dir, 'openclaw', src.dir));
    assert.match(out, /note 2026-05-01: 1 line \(a new note\)/);
    assert.match(out, /memory\/2026-05-02\.md: not a regular file/);
    assert.match(out, /memory\/2026-05-03\.md: larger than 8 MB/);
    assert.match(out, /memory\/2026-05-04\.md: not text \(NUL bytes\)/);
    assert.match(out, /memory\/2026-05-06\.md: a link to outside PATH/);
    assert.match(out, /memory\/elsewhere: not a daily note/);
    assert.deepEqual((await readdir(path.join(ws.dir, 'memory', 'test:1'))).sort(), ['2026-05-01.md', 'MEMORY.md', 'versions']);
    assert.doesNotMatch(await readFile(path.join(ws.dir, 'memory', 'test:1', 'MEMORY.md'), 'utf8'), /SECRET/);

    // A folder of another assistant's kind holds none of it: said, nothing written.
    const wrong = await importInto(ws.dir, 'nanobot', outside.dir, 'test:2');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^import: nothing to import found in .* — nanobot keeps memory\/MEMORY\.md, USER\.md and memory\/history\.jsonl/);
    assert.ok(!(await readdir(path.join(ws.dir, 'memory'))).includes('test:2'));
  } finally {
    await ws.cleanup();
    await src.cleanup();
    await outside.cleanup();
  }
});

test('import refuses while the daemon holds the workspace, and leaves it as it was', async () => {
  const ws = await tempDir();
  const src = await tempDir();
  const daemon = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', 'main.ts'], { stdio: 'ignore' });
  try {
    await put(src.dir, { 'MEMORY.md': '- A fact.\n' });
    await writeFile(path.join(ws.dir, 'daemon.pid'), `${daemon.pid}\n`);
    const r = await memoryCli(['import', '--from', 'openclaw', src.dir, '--chat', 'test:1'], { WORKSPACE_DIR: ws.dir });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^import: another daemon \(pid \d+\) is already using .*import runs only while it is stopped/);
    assert.deepEqual(await readdir(ws.dir), ['daemon.pid']);
  } finally {
    daemon.kill();
    await ws.cleanup();
    await src.cleanup();
  }
});

// MEMORY.md whose readable export is not the file (headings nested, a code line that looks
// like a heading, spaces at a line's end): only the export's exact copy gives it back.
const MEM = '# Ada\n\n## About\n- The user is called Ada.  \n- Ada keeps bees in Lisbon.\n\n##### Hives\n```\n# not a heading\n```\n';
const roundTrip: Responder = (req, i) =>
  promptKind(req) === 'consolidation'
    ? text(JSON.stringify({ history_entry: '[2026-03-10 12:00] Ada talked about honey.', memory_update: MEM, facts: ['Ada sells honey at the market.'] }))
    : echoResponder(req, i);

test('risk: /export cannot be taken back — imported into a fresh chat it gives the same memory files byte for byte and the same search results; a second import adds nothing', async () => {
  const bot = await startTestBot({
    responder: roundTrip,
    prepare: (ws) => put(path.join(ws, 'memory', 'test:1'), { 'MEMORY.md': MEM }),
  });
  const ws = bot.workspace;
  try {
    await bot.send('1', 'I sell honey at the market');
    await bot.send('1', '/new');
    await bot.send('1', 'and candles too, on Saturdays');
    await waitFor(
      async () => (await readFile(path.join(ws, 'memory', 'test:1', 'HISTORY.md'), 'utf8').catch(() => '')).includes('honey'),
      10_000,
      'the consolidation',
    );
    const [reply] = await bot.send('1', '/export');
    const file = /to (\/\S+\.md)$/.exec(reply!)![1]!;
    await bot.app.stop();

    const first = await importInto(ws, 'membot', file, 'test:2');
    assert.match(reportOf(first), /restored as they were: MEMORY\.md, \d{4}-\d\d-\d\d\.md, HISTORY\.md, HISTORY-\d{4}-\d\d\.md/);
    assert.match(reportOf(first), /index: 4 episodes, 1 fact saved; 0 already there/);
    const original = await memoryFiles(ws, 'test:1');
    assert.deepEqual(
      [...original.keys()].sort(),
      [`HISTORY-${new Date().toISOString().slice(0, 7)}.md`, 'HISTORY.md', 'MEMORY.md', `${new Date().toISOString().slice(0, 10)}.md`].sort(),
    );
    assert.deepEqual(await memoryFiles(ws, 'test:2'), original);

    const index = SqliteMemoryIndex.inWorkspace(ws, silentLogger());
    const results = (scope: string, q: string) =>
      index.search(q, { scope, limit: 10 }).map((r) => ({ kind: r.kind, content: r.content, date: r.date, speaker: r.speaker, role: r.role }));
    try {
      const today = new Date().toISOString().slice(0, 10);
      for (const q of ['honey market', 'candles on Saturdays', 'who sells honey?', `what did I say on ${today} about candles`]) {
        const want = results('test:1', q);
        assert.ok(want.length > 0, q);
        if (q === 'who sells honey?')
          assert.ok(
            want.some((r) => r.kind === 'fact'),
            'the fact is among them',
          );
        assert.deepEqual(results('test:2', q), want, q);
      }
    } finally {
      index.close();
    }

    const second = await importInto(ws, 'membot', file, 'test:2');
    assert.match(reportOf(second), /MEMORY\.md: 0 entries added, \d+ already there/);
    assert.match(reportOf(second), /index: 0 episodes, 0 facts saved; 5 already there/);
    assert.deepEqual(await memoryFiles(ws, 'test:2'), original);

    // Taken back into the chat it came from: all there already.
    const home = await importInto(ws, 'membot', file, 'test:1');
    assert.match(reportOf(home), /index: 0 episodes, 0 facts saved; 5 already there/);
    assert.deepEqual(await memoryFiles(ws, 'test:1'), original);
  } finally {
    await bot.close();
  }
});
