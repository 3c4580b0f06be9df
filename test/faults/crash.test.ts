/** Crash at random with the embedded state (files and SQLite): test/faults/crash-run.ts. */
import { test } from 'node:test';
import { patient } from '../helpers/wait.js';
import { crashAtRandom } from './crash-run.js';

test('crash at random: 20 × kill -9 while 20 chats talk — nothing accepted is lost, nothing corrupt, no reply twice', { timeout: patient(420_000) }, () =>
  crashAtRandom(),
);
