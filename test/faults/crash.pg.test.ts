/**
 * Crash at random with DATABASE_URL (issue 35): the same run as crash.test.ts, the state in a
 * throwaway PostgreSQL and every start on a fresh empty workspace (test/faults/crash-run.ts).
 */
import { test } from 'node:test';
import { startPg } from '../helpers/pg.js';
import { patient } from '../helpers/wait.js';
import { crashAtRandom } from './crash-run.js';

test(
  'crash at random on PostgreSQL: 20 × kill -9 while 20 chats talk, a fresh workspace each start — nothing accepted is lost, nothing twice',
  {
    timeout: patient(420_000),
  },
  () =>
    crashAtRandom({
      postgres: async () => {
        const cluster = await startPg();
        return { url: await cluster.createDatabase(), stop: () => cluster.stop() };
      },
    }),
);
