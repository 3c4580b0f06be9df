/**
 * The terminal channel end to end, through the real entry point (src/main.ts) in a child
 * process: replies on stdout, logs on stderr, exit codes, and a graceful SIGTERM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PassThrough, Writable } from 'node:stream';
import { lastUserText, startFakeLlm, text } from '../helpers/fake-llm.js';
import { ConsoleChannel } from '../../src/channels/console.js';
import { registerSecret } from '../../src/core/log.js';
import { tempDir } from '../helpers/workspace.js';
import { patient, waitFor } from '../helpers/wait.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const mainTs = path.join(repoRoot, 'src', 'main.ts');
// tsx by absolute URL, so the child can run from a directory other than the repo root.
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** Only what a child needs; nothing from the parent's environment (no keys, no LOG_LEVEL). */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { TZ: 'UTC' };
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'SYSTEMROOT']) {
    const v = process.env[k];
    if (v) env[k] = v;
  }
  return env;
}

/** The repo root when it has no .env (dotenv would read it), else `fallback`. */
function cwdWithoutDotEnv(fallback: string): string {
  return existsSync(path.join(repoRoot, '.env')) ? fallback : repoRoot;
}

interface Run {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The daemon in a child. The guard only ends a child that hangs: it counts from the spawn, so it
 * covers the start under tsx too (8–15 s at load ~20 on 2 cores), and is far from any real run.
 */
function startMain(env: Record<string, string>, cwd: string, timeoutMs = patient(60_000)): Run {
  const child = spawn(process.execPath, ['--import', tsxLoader, mainTs], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const guard = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal });
    }),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

function jsonLines(s: string): Array<Record<string, any>> {
  const out: Array<Record<string, any>> = [];
  for (const line of s.split('\n')) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === 'object') out.push(v);
    } catch {
      /* not JSON */
    }
  }
  return out;
}

test('piped input: one reply per line on stdout, logs on stderr, exit 0, session on disk', async () => {
  const llm = await startFakeLlm();
  const ws = await tempDir();
  let started: Run | undefined;
  try {
    const run = (started = startMain(
      { ...baseEnv(), OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'x', WORKSPACE_DIR: ws.dir, LOG_LEVEL: 'info' },
      cwdWithoutDotEnv(ws.dir),
    ));
    run.child.stdin.end('hello\n/status full\n');
    const { code, signal } = await run.exited;
    const out = run.stdout();
    assert.equal(code, 0, `exit code (signal ${signal}); stderr:\n${run.stderr()}`);

    const lines = out.split('\n');
    assert.equal(lines[0], 'echo: hello', `stdout:\n${out}`);
    const status = lines.slice(1).join('\n');
    assert.match(status, /Messages: 2 in session\b/);
    assert.match(status, /gpt-4o-mini/);
    assert.ok(out.endsWith('\n'));

    // stdout is replies only; the logs are JSON lines on stderr.
    assert.deepEqual(jsonLines(out), [], `no log lines on stdout:\n${out}`);
    assert.ok(!out.includes('"level"'), 'no log fragments on stdout');
    assert.ok(
      jsonLines(run.stderr()).some((l) => /daemon started/.test(String(l.msg))),
      `the start-up log line is on stderr:\n${run.stderr()}`,
    );

    assert.equal(llm.chatRequests().length, 1, 'only the message went to the model, not the command');
    assert.equal(llm.chatRequests()[0]!.body.model, 'gpt-4o-mini');

    const session = JSON.parse(await readFile(path.join(ws.dir, 'sessions', 'console:local.json'), 'utf8'));
    assert.deepEqual(
      session.messages.map((m: { role: string; content: string }) => [m.role, m.content]),
      [
        ['user', 'hello'],
        ['assistant', 'echo: hello'],
      ],
    );
    // The memory page lists this chat as "Terminal" (sessions.names.json).
    assert.deepEqual(JSON.parse(await readFile(path.join(ws.dir, 'sessions.names.json'), 'utf8')).chats, {
      'console:local': { kind: 'private', name: 'Terminal' },
    });
  } finally {
    if (started && started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
    await llm.close();
    await ws.cleanup();
  }
});

test('no OPENAI_API_KEY and no OPENAI_BASE_URL: exit 2 with one line on stderr and no stack trace', async () => {
  const ws = await tempDir();
  try {
    const env = { ...baseEnv(), WORKSPACE_DIR: ws.dir };
    assert.ok(!('OPENAI_API_KEY' in env) && !('OPENAI_BASE_URL' in env));
    // A cwd without .env, so dotenv cannot supply a key either.
    const cwd = cwdWithoutDotEnv(ws.dir);
    assert.ok(!existsSync(path.join(cwd, '.env')));

    const run = startMain(env, cwd);
    run.child.stdin.end();
    const { code } = await run.exited;
    const err = run.stderr();
    assert.equal(code, 2, `stderr:\n${err}`);
    const errLines = err.split('\n').filter((l) => l.trim() !== '');
    assert.equal(errLines.length, 1, `one line:\n${err}`);
    assert.match(errLines[0]!, /OPENAI_API_KEY/);
    assert.ok(!/^\s*at /m.test(err), `no stack frames:\n${err}`);
    assert.equal(run.stdout(), '', 'nothing on stdout');
  } finally {
    await ws.cleanup();
  }
});

test('SIGTERM while a turn is running: the reply is still printed and the exit code is 0', async () => {
  // The model's answer is held until the daemon has taken the signal: it can only print the reply
  // if it waits for the running turn, whatever the machine's speed.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const llm = await startFakeLlm(async (req) => {
    await released;
    return text(`echo: ${lastUserText(req)}`);
  });
  const ws = await tempDir();
  let started: Run | undefined;
  try {
    const run = (started = startMain(
      { ...baseEnv(), OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'x', WORKSPACE_DIR: ws.dir, LOG_LEVEL: 'info' },
      cwdWithoutDotEnv(ws.dir),
    ));
    run.child.stdin.write('slow question\n'); // stdin stays open: only the signal ends the run
    await waitFor(() => /daemon started/.test(run.stderr()) || run.child.exitCode !== null, 20_000, 'the daemon to start');
    await waitFor(() => llm.chatRequests().length > 0 || run.child.exitCode !== null, 10_000, 'the request to reach the fake LLM');
    assert.equal(run.child.exitCode, null, `the daemon is still running; stderr:\n${run.stderr()}`);
    run.child.kill('SIGTERM');
    await waitFor(() => /stopping: no new messages/.test(run.stderr()) || run.child.exitCode !== null, 10_000, 'the daemon to take the signal');
    assert.equal(run.stdout(), '', 'no reply before the answer is released');
    release();

    const { code, signal } = await run.exited;
    assert.equal(code, 0, `exit code (signal ${signal}); stderr:\n${run.stderr()}`);
    assert.equal(run.stdout(), 'echo: slow question\n');
    assert.equal(llm.chatRequests().length, 1);

    const session = JSON.parse(await readFile(path.join(ws.dir, 'sessions', 'console:local.json'), 'utf8'));
    assert.deepEqual(
      session.messages.map((m: { content: string }) => m.content),
      ['slow question', 'echo: slow question'],
    );
  } finally {
    release();
    if (started && started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
    await llm.close();
    await ws.cleanup();
  }
});

test("risk: the model's escape sequences reach the operator's terminal — the console strips control characters from what it prints", async () => {
  const input = new PassThrough();
  let printed = '';
  const output = new Writable({
    write(chunk, _enc, cb) {
      printed += chunk.toString();
      cb();
    },
  });
  registerSecret('sk-console-secret-98765');
  const hostile =
    'clear\u001b[2J\u001b[H title\u001b]0;pwned\u0007 bell\u0007 csi\u009b31m back\b\b del\u007f cr\rnul\u0000 key sk-console-secret-98765\nsecond line\twith a tab';
  const channel = new ConsoleChannel({ chatId: 'local', input, output, interactive: false });
  await channel.start((_msg, reply) => reply.send({ kind: 'text', text: hostile }));
  input.end('hi\n');
  await channel.finished;
  assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(printed), JSON.stringify(printed));
  assert.ok(!printed.includes('sk-console-secret-98765'), 'the key is scrubbed as in the log');
  assert.match(printed, /clear\[2J\[H title\]0;pwned bell csi31m back del crnul key \[redacted\]\nsecond line\twith a tab\n/);
});
