/**
 * Which failures of node-postgres are waited out (the database is not there now), which rerun a
 * transaction (a conflict), and which are final (the database said no): the split every call of
 * src/storage/pg/database.ts goes by. The servers' own answers are real in database.test.ts;
 * here, the whole table at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { isAppError } from '../../../src/core/errors.js';
import { dbFailureKind, toDbError } from '../../../src/storage/pg/errors.js';

const fromServer = (code: string, message = 'server said so') => Object.assign(new pg.DatabaseError(message, 0, 'error'), { code });
const fromSocket = (code: string, message = `connect ${code} 127.0.0.1:5432`) => Object.assign(new Error(message), { code });

test('not now: the server shutting down, starting up or full, and a connection refused, reset or lost — waited out as database.unreachable', () => {
  for (const err of [
    fromServer('57P01', 'terminating connection due to administrator command'),
    fromServer('57P03', 'the database system is starting up'),
    fromServer('53300', 'sorry, too many clients already'),
    fromServer('08006'),
    fromSocket('ECONNREFUSED'),
    fromSocket('ETIMEDOUT'),
    fromSocket('ERR_STREAM_DESTROYED', 'Cannot call write after a stream was destroyed'),
    new Error('Connection terminated unexpectedly'),
    new Error('Client has encountered a connection error and is not queryable'),
    new AggregateError([fromSocket('ECONNREFUSED')], ''),
  ]) {
    assert.equal(dbFailureKind(err), 'unreachable', err.message);
    assert.ok(isAppError(toDbError(err, 'db:5432/membot'), 'database.unreachable'));
  }
});

test('a conflict between transactions (serialization failure, deadlock) reruns; an answer like a syntax error or a taken key is final, database.rejected with its SQLSTATE', () => {
  assert.equal(dbFailureKind(fromServer('40001')), 'conflict');
  assert.equal(dbFailureKind(fromServer('40P01')), 'conflict');
  for (const code of ['42601', '23505', '42501', '57014', '57P04']) assert.equal(dbFailureKind(fromServer(code)), 'rejected', code);
  const taken = toDbError(fromServer('23505', 'duplicate key value violates unique constraint "notes_pkey"'), 'db:5432/membot');
  assert.ok(isAppError(taken, 'database.rejected'));
  assert.equal(taken.sqlState, '23505');
  assert.equal(
    taken.message,
    'the database at db:5432/membot refused a statement: duplicate key value violates unique constraint "notes_pkey" (SQLSTATE 23505)',
  );
});
