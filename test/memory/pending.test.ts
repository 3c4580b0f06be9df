/** Held memory writes in the workspace file (memory-pending.json): the PendingWrites contract (pending.contract.ts). */
import { describe } from 'node:test';
import { FilePendingWrites } from '../../src/memory/pending-file.js';
import { fileHarness } from '../helpers/stores.js';
import { pendingWritesContract } from './pending.contract.js';

describe('FilePendingWrites meets the PendingWrites contract', () =>
  pendingWritesContract(() => fileHarness(async (dir) => FilePendingWrites.inWorkspace(dir))));
