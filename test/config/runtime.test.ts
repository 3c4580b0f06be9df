/**
 * Runtime settings (workspace/preferences/runtime-config.json): defaults, validation that names
 * the bad key, reload without a restart, and the start-up refusal of a bad file (exit 2).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readFile, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_RUNTIME_CONFIG, FileRuntimeConfigStore, parseRuntimeConfig } from '../../src/config/runtime.js';
import { startTestBot } from '../helpers/app.js';
import { captureLog, tempDir } from '../helpers/workspace.js';
import { patient } from '../helpers/wait.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

const DEFAULTS = {
  memory: { enabled: true, recentDays: 7, budgetPercent: 25 },
  compaction: { enabled: true, maxContextTokens: 50_000, keepLastMessages: 20 },
};

async function writeConfig(workspace: string, content: unknown, mtime?: Date): Promise<string> {
  const file = path.join(workspace, 'preferences', 'runtime-config.json');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  if (mtime) await utimes(file, mtime, mtime);
  return file;
}

test('the documented defaults', () => {
  assert.deepEqual(DEFAULT_RUNTIME_CONFIG, DEFAULTS);
  assert.deepEqual(parseRuntimeConfig('{}'), DEFAULTS);
});

test('missing file → defaults, no problem at start', async () => {
  const ws = await tempDir();
  try {
    const store = new FileRuntimeConfigStore(ws.dir, undefined, 0);
    assert.equal(store.init(), null);
    const rc = store.get();
    assert.equal(rc.memory.enabled, true);
    assert.equal(rc.memory.recentDays, 7);
    assert.equal(rc.compaction.enabled, true);
    assert.equal(rc.compaction.maxContextTokens, 50_000);
    assert.equal(rc.compaction.keepLastMessages, 20);
    assert.deepEqual(rc, DEFAULTS);
    assert.deepEqual(await readdir(ws.dir), [], 'reading settings creates no files');
  } finally {
    await ws.cleanup();
  }
});

test('a partial file overrides only the keys it names', () => {
  const rc = parseRuntimeConfig(JSON.stringify({ memory: { recentDays: 3 }, compaction: { enabled: false } }));
  assert.deepEqual(rc, {
    memory: { enabled: true, recentDays: 3, budgetPercent: 25 },
    compaction: { enabled: false, maxContextTokens: 50_000, keepLastMessages: 20 },
  });
  // Parsing never changes the defaults themselves.
  assert.deepEqual(DEFAULT_RUNTIME_CONFIG, DEFAULTS);
});

test('wrong types and values are refused with a message naming the key', () => {
  const cases: Array<[unknown, string]> = [
    [{ memory: { recentDays: -1 } }, 'memory.recentDays'],
    [{ memory: { recentDays: 1.5 } }, 'memory.recentDays'],
    [{ memory: { recentDays: '7' } }, 'memory.recentDays'],
    [{ memory: { recentDays: 366 } }, 'memory.recentDays'],
    [{ memory: { enabled: 'yes' } }, 'memory.enabled'],
    [{ memory: { enabled: 1 } }, 'memory.enabled'],
    [{ memory: { budgetPercent: 0 } }, 'memory.budgetPercent'],
    [{ memory: { budgetPercent: 100 } }, 'memory.budgetPercent'],
    [{ compaction: { enabled: null } }, 'compaction.enabled'],
    [{ compaction: { maxContextTokens: 10 } }, 'compaction.maxContextTokens'],
    [{ compaction: { maxContextTokens: 'lots' } }, 'compaction.maxContextTokens'],
    [{ compaction: { keepLastMessages: 0 } }, 'compaction.keepLastMessages'],
    [{ memory: 5 }, 'memory'],
    [{ compaction: [] }, 'compaction'],
  ];
  for (const [value, key] of cases) {
    assert.throws(
      () => parseRuntimeConfig(JSON.stringify(value)),
      (err: Error) => {
        assert.ok(err.message.includes(`"${key}"`), `${JSON.stringify(value)} → "${err.message}" does not name ${key}`);
        assert.ok(!err.message.includes('\n'), 'one line');
        return true;
      },
    );
  }
});

test('unknown keys are refused and named (typos do not pass silently)', () => {
  assert.throws(() => parseRuntimeConfig('{"memroy": {"enabled": false}}'), /"memroy"/);
  assert.throws(() => parseRuntimeConfig('{"memory": {"recentDay": 3}}'), /"memory\.recentDay"/);
  assert.throws(() => parseRuntimeConfig('{"compaction": {"maxTokens": 3000}}'), /"compaction\.maxTokens"/);
});

test('a file that is not a JSON object is refused', () => {
  assert.throws(() => parseRuntimeConfig('{"memory": {'), /not valid JSON/);
  assert.throws(() => parseRuntimeConfig('[]'), /JSON object/);
  assert.throws(() => parseRuntimeConfig('null'), /JSON object/);
  assert.throws(() => parseRuntimeConfig('7'), /JSON object/);
});

test('an invalid file at init → a one-line problem naming the key', async () => {
  const ws = await tempDir();
  try {
    await writeConfig(ws.dir, { memory: { recentDays: 'seven' } });
    const problem = new FileRuntimeConfigStore(ws.dir, undefined, 0).init();
    assert.ok(problem);
    assert.match(problem, /runtime-config\.json/);
    assert.match(problem, /"memory\.recentDays"/);
    assert.ok(!problem.includes('\n'));
  } finally {
    await ws.cleanup();
  }
});

test('a changed file is picked up without a restart; a bad edit keeps the last good settings and is logged once', async () => {
  const ws = await tempDir();
  const logs = captureLog();
  try {
    const store = new FileRuntimeConfigStore(ws.dir, logs.log, 0);
    assert.equal(store.init(), null);
    assert.equal(store.get().memory.enabled, true);

    const t0 = Date.now() / 1000;
    await writeConfig(ws.dir, { memory: { enabled: false, recentDays: 2 } }, new Date((t0 + 10) * 1000));
    assert.equal(store.get().memory.enabled, false);
    assert.equal(store.get().memory.recentDays, 2);

    await writeConfig(ws.dir, { memory: { recentDays: 'x' } }, new Date((t0 + 20) * 1000));
    for (let i = 0; i < 3; i++) {
      assert.equal(store.get().memory.enabled, false, 'last good settings stay');
      assert.equal(store.get().memory.recentDays, 2);
    }
    const errors = logs.lines().filter((l) => l.level === 50);
    assert.equal(errors.length, 1, 'the bad file is reported once, not on every read');
    assert.match(errors[0]!.msg, /"memory\.recentDays"/);

    await writeConfig(ws.dir, { compaction: { keepLastMessages: 5 } }, new Date((t0 + 30) * 1000));
    assert.equal(store.get().compaction.keepLastMessages, 5);
    assert.equal(store.get().memory.enabled, true, 'keys no longer in the file go back to their defaults');

    await rm(path.join(ws.dir, 'preferences', 'runtime-config.json'));
    assert.deepEqual(store.get(), DEFAULTS, 'file removed → defaults');
  } finally {
    await ws.cleanup();
  }
});

test('end to end: memory.enabled=false written while the bot runs takes effect on the next message', async () => {
  const bot = await startTestBot();
  try {
    const dir = path.join(bot.workspace, 'memory', 'test:1');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'MEMORY.md'), '- the user is called Ada\n');
    const at = new Date('2026-03-10T12:00:00Z');
    await bot.send('1', 'first', { receivedAt: at });
    assert.match(String(bot.llm.chatRequests()[0]!.body.messages[0].content), /# Memory\n\n## Long-term Memory\n- the user is called Ada/);

    await writeConfig(bot.workspace, { memory: { enabled: false } });
    await new Promise((r) => setTimeout(r, 1_100)); // the daemon re-checks the file at most once a second
    assert.deepEqual(await bot.send('1', 'second', { receivedAt: at }), ['echo: second']);
    const system = String(bot.llm.chatRequests()[1]!.body.messages[0].content);
    assert.ok(!system.includes('# Memory'), 'no memory block after the switch');
    assert.ok(!system.includes('Ada'));
    const notes = await readFile(path.join(dir, '2026-03-10.md'), 'utf8');
    assert.equal(notes.split('\n').filter(Boolean).length, 1, 'no note for the message sent with memory off');
    assert.ok(bot.logs.lines().some((l) => l.msg === '[Config] runtime config reloaded'));
  } finally {
    await bot.close();
  }
});

function runMain(workspace: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
        WORKSPACE_DIR: workspace,
        TZ: 'UTC',
        LOG_LEVEL: 'silent',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), patient(20_000));
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('an invalid runtime-config.json at start: the daemon exits 2 with one line naming the key', { timeout: patient(30_000) }, async () => {
  const ws = await tempDir();
  try {
    await writeConfig(ws.dir, { memory: { recentDays: -3 } });
    const res = await runMain(ws.dir);
    assert.equal(res.code, 2, res.stderr);
    assert.equal(res.stdout, '', 'nothing on stdout (it belongs to replies)');
    const lines = res.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, res.stderr);
    assert.match(lines[0]!, /runtime-config\.json/);
    assert.match(lines[0]!, /"memory\.recentDays"/);
    assert.ok(!(await readdir(ws.dir)).includes('sessions'), 'nothing started before the check');
  } finally {
    await ws.cleanup();
  }
});

test('contrast: the same start with a valid runtime-config.json runs and exits 0 at end of input', { timeout: patient(30_000) }, async () => {
  const ws = await tempDir();
  try {
    await writeConfig(ws.dir, { memory: { recentDays: 3 } });
    const res = await runMain(ws.dir);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, '');
  } finally {
    await ws.cleanup();
  }
});

test('risk: prototype pollution through runtime-config.json — only own, known keys are read, unknown ones named', async () => {
  const saved = { toString: Object.prototype.toString, hasOwnProperty: Object.prototype.hasOwnProperty };
  const cases: Array<{ text: string; names: string }> = [
    { text: '{"__proto__":{"toString":1}}', names: '"__proto__"' },
    { text: '{"__proto__":{"hasOwnProperty":"x"}}', names: '"__proto__"' },
    { text: '{"constructor":{"prototype":{"x":1}}}', names: '"constructor"' },
    { text: '{"memory":{"__proto__":{"enabled":false}}}', names: '"memory.__proto__"' },
    { text: '{"memory":{"toString":1}}', names: '"memory.toString"' },
    { text: '{"compaction":{"hasOwnProperty":2}}', names: '"compaction.hasOwnProperty"' },
  ];
  try {
    for (const c of cases) {
      assert.throws(
        () => parseRuntimeConfig(c.text),
        (err: Error) => err.message.includes(`unknown key ${c.names}`),
        c.text,
      );
      assert.equal(Object.prototype.toString, saved.toString, `${c.text} changed Object.prototype.toString`);
      assert.equal(Object.prototype.hasOwnProperty, saved.hasOwnProperty, `${c.text} changed Object.prototype.hasOwnProperty`);
      assert.equal(({} as Record<string, unknown>).x, undefined, `${c.text} polluted Object.prototype`);
    }
    // At start the daemon refuses the file with one line naming the key (and stays healthy).
    const ws = await tempDir();
    try {
      await writeConfig(ws.dir, '{"__proto__":{"toString":1}}');
      const problem = new FileRuntimeConfigStore(ws.dir, undefined, 0).init();
      assert.match(problem ?? '', /unknown key "__proto__" \(known: memory, compaction\)/);
      assert.equal(`${{ a: 1 }}`, '[object Object]');
    } finally {
      await ws.cleanup();
    }
  } finally {
    Object.prototype.toString = saved.toString;
    Object.prototype.hasOwnProperty = saved.hasOwnProperty;
    delete (Object.prototype as Record<string, unknown>).x;
  }
});
