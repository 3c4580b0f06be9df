/**
 * /status with DATABASE_URL: the owner sees where the state is kept (host:port/database, never
 * the password) and whether it answers, since when — up in plain /status and /status full, and
 * while the database is down a line saying so and that work waits for it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBot, unsavedWriter } from '../../helpers/app.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { waitFor } from '../../helpers/wait.js';
import { silentLogger } from '../../../src/core/log.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

test('/status names the database the state is kept in (never its password), up since when; while it is down, it says so', async () => {
  const url = await cluster.createDatabase();
  const bot = await startTestBot({ env: { DATABASE_URL: url } });
  const where = `127.0.0.1:${new URL(url).port}${new URL(url).pathname}`;
  try {
    await bot.send('1', 'hello there');
    const [plain] = await bot.send('1', '/status');
    assert.match(plain!, new RegExp(`^Database: PostgreSQL at ${where}: up since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`, 'm'));
    assert.match(plain!, /^All is well\.$/m);
    const [full] = await bot.send('1', '/status full');
    assert.match(full!, new RegExp(`^Database: PostgreSQL at ${where}: up since `, 'm'));
    assert.doesNotMatch(plain! + full!, new RegExp(cluster.password), 'never the password');

    // Down: a message waits for the database (its journal entry first), so the command is run
    // directly here, as the intake runs it, once a call has found the database gone.
    cluster.halt();
    const db = bot.app.parts.database!;
    const waiting = db.query('SELECT 1').catch(() => undefined);
    await waitFor(() => db.health().state === 'down', 30_000, 'the database seen down');
    const session = await bot.app.parts.sessions.getOrCreate('test', '1');
    const inbound = { channel: 'test', chatId: '1', userId: 'u-1', text: '/status', receivedAt: new Date(), role: 'owner' as const };
    const status = bot.app.commands.find('status')!;
    const down = await status.run({ inbound, session, writes: unsavedWriter(session), args: '', role: 'owner', log: silentLogger() });
    assert.match(
      down,
      new RegExp(`^Database: PostgreSQL at ${where}: DOWN since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(.+\\); waiting for it, retrying$`, 'm'),
    );
    // What needs the database is not waited for (each read would wait it out): said instead.
    assert.match(down, /^Reminders: not known while the database does not answer$/m);
    assert.match(down, /^Today: tokens used not known while the database does not answer$/m);
    assert.match(down, /Needs a look: .*the database does not answer: what needs it waits and is retried \(the log says why\)/);
    assert.doesNotMatch(down, new RegExp(cluster.password), 'never the password, down either');
    cluster.resume();
    await waiting;
  } finally {
    await bot.close();
  }
});
