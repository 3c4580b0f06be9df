/**
 * The piped terminal (`npm start --silent < input.txt`) with DATABASE_URL: one message per line
 * in, one reply per line out, then the daemon exits. With a database the daemon is a member of a
 * cluster, whose intake only journals: the lines are answered by whichever process claims the
 * chat. The end of input must wait for those answers — not stop the claiming and leave the lines
 * open in the journal, exit 0 and print nothing (as a CI run of test/app/postgres-daemon.test.ts
 * once did: its runner had not yet taken the lines when input ended).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { migratedDatabase, testDatabase } from '../helpers/pg-stores.js';
import { lastUserText, memoryAwareResponder, promptKind, startFakeLlm, text, type FakeLlm } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { childEnv, mainTs, runToEnd, tsxLoader } from '../helpers/child.js';
import { patient } from '../helpers/wait.js';

let cluster: PgCluster;
let llm: FakeLlm;
before(async () => {
  cluster = await startPg();
  llm = await startFakeLlm((req) => (promptKind(req) === 'chat' ? text(`You said: ${lastUserText(req)}`) : memoryAwareResponder(req, 0)));
});
after(async () => {
  await llm?.close();
  await cluster?.stop();
});

test('risk: piped input ends before the lines are answered — with DATABASE_URL the daemon exited with nothing printed; it answers every line, in order, then exits', {
  timeout: patient(120_000),
}, async () => {
  const url = await migratedDatabase(cluster);
  // The terminal's chat is held for a few seconds more by a process that is gone (killed while
  // it ran the chat): this process can answer only once that claim runs out, long after the
  // input ended. Without a held chat the same race is a matter of milliseconds.
  const db = testDatabase(url);
  await db.query(
    "INSERT INTO inbox_claims (channel, chat_id, owner, expires_at) VALUES ('console', 'local', 'a-killed-process', now() + interval '3 seconds')",
  );
  await db.close();
  const ws = await tempDir('membot-piped-pg-');
  try {
    const run = await runToEnd(process.execPath, ['--import', tsxLoader, mainTs], {
      cwd: ws.dir,
      env: childEnv({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test-key-123456', WORKSPACE_DIR: ws.dir, DATABASE_URL: url, LOG_LEVEL: 'warn' }),
      input: 'first line\nsecond line\n/status\n',
    });
    assert.equal(run.code, 0, `the daemon ran:\n${run.stderr}`);
    const out = run.stdout.split('\n');
    assert.deepEqual(out.slice(0, 2), ['You said: first line', 'You said: second line'], `each line answered, in order:\n${run.stdout}\n${run.stderr}`);
    assert.match(out.slice(2).join('\n'), /Database: PostgreSQL at /, '/status answered after them');
  } finally {
    await ws.cleanup();
  }
});
