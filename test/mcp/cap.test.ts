/**
 * The bound on one MCP answer, on the wire (src/mcp/cap.ts): an SSE stream is bounded per
 * event, not over its life — a standing stream of many small events goes on — and an endless
 * event on a stream no request waits on (the standing GET stream) closes that connection and
 * drops the session instead of filling memory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cappedFetch, eventCounter } from '../../src/mcp/cap.js';

const bytes = (s: string) => new TextEncoder().encode(s);

test('events are counted one by one: LF, CRLF and CR end them; only one event over the bound fails', () => {
  const fits = eventCounter(20);
  for (let i = 0; i < 100; i++) assert.ok(fits(bytes(`data: event ${i}\n\n`)), 'many small events, far more than 20 bytes in all');
  assert.ok(fits(bytes('data: 0123456789\r\n\r\ndata: 0123456789\r\rdata: 01')), 'CRLF and CR end events too');
  assert.ok(fits(bytes('23456789\n\n')), 'an event split across chunks, within the bound');
  const long = eventCounter(20);
  assert.ok(long(bytes('data: 0123456789\n')), 'one line of an event');
  assert.equal(long(bytes('data: 0123456789\n')), false, 'the second line takes the same event past 20 bytes');
});

/** A server that answers every request with `answer`; `closed` resolves when a response's connection closes. */
async function serve(answer: (res: http.ServerResponse) => void) {
  const closes: Array<Promise<void>> = [];
  const server = http.createServer((req, res) => {
    closes.push(new Promise((r) => res.once('close', () => r())));
    req.resume();
    answer(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    closed: () => closes[0]!,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

test('a standing stream of small events passes whole, far past the bound in all', async () => {
  const server = await serve((res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < 500; i++) res.write(`data: {"n":${i}}\n\n`);
    res.end();
  });
  try {
    let dropped = false;
    const res = await cappedFetch('flood', 64, () => (dropped = true))(server.url, { method: 'GET' });
    const text = await res.text();
    assert.equal(text.split('\n\n').filter(Boolean).length, 500);
    assert.equal(dropped, false);
  } finally {
    await server.close();
  }
});

test('an endless event on the standing GET stream: the connection is closed and the session dropped', async () => {
  const server = await serve((res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: ');
    const pump = () => {
      while (!res.destroyed && res.write('x'.repeat(16 * 1024)));
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  });
  try {
    let dropped = false;
    const res = await cappedFetch('flood', 100_000, () => (dropped = true))(server.url, { method: 'GET' });
    await assert.rejects(res.text(), /too large/);
    assert.equal(dropped, true, 'the session is told to drop');
    await server.closed();
  } finally {
    await server.close();
  }
});
