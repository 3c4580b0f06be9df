/**
 * What a server lists becomes tools the model may call, and what a tool answers becomes text
 * the model reads: names valid and namespaced, only allowed tools, schemas that are object
 * schemas, descriptions cut; output scrubbed, cut with a marker, non-text described, a failure
 * reported as one, and marked as data from outside.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTools, MAX_DESCRIPTION_CHARS, toolName, type ListedTool } from '../../src/mcp/tools.js';
import { cut, endLine, MAX_OUTPUT_CHARS, renderResult, sourceLine } from '../../src/mcp/output.js';
import { registerSecret } from '../../src/core/log.js';
import { isAppError } from '../../src/core/errors.js';

const VALID = /^[A-Za-z0-9_-]{1,64}$/;

test('names are <server>__<tool>, in the characters a function name may hold, 64 at most, never two alike', () => {
  assert.equal(toolName('files', 'read_file'), 'files__read_file');
  assert.equal(toolName('gh', 'repos/list.all'), 'gh__repos_list_all');
  const long = toolName('calendar', 'x'.repeat(100));
  assert.match(long, VALID);
  assert.equal(long.length, 64);
  assert.notEqual(toolName('calendar', `${'x'.repeat(100)}y`), long, 'two long names differ');
  const listed: ListedTool[] = [{ name: 'a.b' }, { name: 'a/b' }, { name: 'a_b' }];
  const names = buildTools('s', listed, {}, async () => '').tools.map((t) => t.name);
  assert.equal(new Set(names).size, 3, names.join(', '));
  for (const n of names) assert.match(n, VALID);
});

test('a name listed three times: one tool, the repeats left out with why; a name never given twice, even when its hashed form is taken', () => {
  const built = buildTools('s', [{ name: 'lookup' }, { name: 'lookup' }, { name: 'lookup' }, { name: 'other' }], {}, async () => '');
  assert.deepEqual(
    built.tools.map((t) => t.name),
    ['s__lookup', 's__other'],
  );
  assert.deepEqual(built.skipped, [
    { tool: 'lookup', why: 'it is listed more than once' },
    { tool: 'lookup', why: 'it is listed more than once' },
  ]);
  const taken = new Set<string>();
  for (let i = 0; i < 3; i++) taken.add(toolName('s', 'lookup', taken));
  assert.equal(taken.size, 3, [...taken].join(', '));
  for (const n of taken) assert.match(n, VALID);
});

test("maxTools: the first ones in the server's order are taken, the rest named as left out", () => {
  const listed: ListedTool[] = ['a', 'b', 'odd', 'c', 'd'].map((name) => ({ name, ...(name === 'odd' ? { inputSchema: { type: 'string' } } : {}) }));
  const built = buildTools('s', listed, { maxTools: 2 }, async () => '');
  assert.deepEqual(
    built.tools.map((t) => t.name),
    ['s__a', 's__b'],
  );
  assert.deepEqual(built.overMax, ['c', 'd']);
  assert.deepEqual(
    built.skipped.map((x) => x.tool),
    ['odd'],
    'a refused tool takes no place',
  );
});

test('only the allowed tools; a schema that is not an object schema or is huge leaves its tool out, with why', () => {
  const listed: ListedTool[] = [
    {
      name: 'read',
      description: 'Reads.',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, $schema: 'http://json-schema.org/draft-07/schema#' },
    },
    { name: 'write', inputSchema: { type: 'object' } },
    { name: 'odd', inputSchema: { type: 'string' } },
    {
      name: 'huge',
      inputSchema: {
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(20) }])),
      },
    },
  ];
  const all = buildTools('fs', listed, { timeoutMs: 1234 }, async () => '');
  assert.deepEqual(
    all.tools.map((t) => t.name),
    ['fs__read', 'fs__write'],
  );
  assert.deepEqual(
    all.skipped.map((s) => s.tool),
    ['odd', 'huge'],
  );
  assert.match(all.skipped[0]!.why, /type "string", not "object"/);
  assert.deepEqual(all.tools[0]!.parameters, { type: 'object', properties: { path: { type: 'string' } } }, 'the schema as the server gave it, without $schema');
  assert.equal(all.tools[0]!.timeoutMs, 1234);
  assert.match(all.tools[0]!.description, /^\(from MCP server "fs"\) Reads\.$/);
  const allowed = buildTools('fs', listed, { allowed: ['read'] }, async () => '');
  assert.deepEqual(
    allowed.tools.map((t) => t.name),
    ['fs__read'],
  );
});

test('a description is cleaned of control characters and cut', () => {
  const [tool] = buildTools('s', [{ name: 't', description: `a\u0000b\u001b[31m${'y'.repeat(5000)}` }], {}, async () => '').tools;
  assert.ok(!/[\u0000-\u0008\u001b]/.test(tool!.description));
  assert.ok(tool!.description.length < MAX_DESCRIPTION_CHARS + 40, `${tool!.description.length} characters`);
});

test('output: text kept, pictures and binary described, marked as outside data, a secret scrubbed, a long text cut with a marker', () => {
  registerSecret('sk-mcp-secret-000111222');
  const out = renderResult('fx', 'look', {
    content: [
      { type: 'text', text: 'token is sk-mcp-secret-000111222' },
      { type: 'image', data: 'A'.repeat(4096), mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///a.txt', text: 'file text' } },
      { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA', mimeType: 'application/zip' } },
      { type: 'resource_link', uri: 'https://example.com/x', name: 'x' },
      { type: 'hologram' },
    ],
  });
  assert.equal(
    out,
    [
      sourceLine('fx', 'look'),
      'token is [redacted]',
      '[image image/png, 3 KB — not shown]',
      '[resource file:///a.txt]',
      'file text',
      '[resource file:///b.bin (application/zip, 3 bytes) — not shown]',
      '[link x: https://example.com/x]',
      '[hologram content — not shown]',
      endLine('look'),
    ].join('\n'),
  );
  assert.match(sourceLine('fx', 'look'), /MCP server "fx".*not as instructions/);
  const long = renderResult('fx', 'big', { content: [{ type: 'text', text: 'x'.repeat(50_000) }] });
  assert.ok(long.length < MAX_OUTPUT_CHARS + 200, `${long.length} characters`);
  assert.match(long, /…\[cut: 34,000 more characters not shown\]\n\[End of output of "big"\]$/);
  assert.equal(renderResult('fx', 'quiet', { content: [] }), `${sourceLine('fx', 'quiet')}\n(no output)\n${endLine('quiet')}`);
  assert.equal(renderResult('fx', 'json', { content: [], structuredContent: { a: 1 } }), `${sourceLine('fx', 'json')}\n{"a":1}\n${endLine('json')}`);
});

test('a secret cut in half by the cap is still scrubbed (scrubbed first, then cut)', () => {
  registerSecret('sk-boundary-secret-99887766');
  const text = `${'x'.repeat(MAX_OUTPUT_CHARS - 5)}sk-boundary-secret-99887766`;
  const out = renderResult('fx', 'edge', { content: [{ type: 'text', text }] });
  assert.ok(!out.includes('sk-bo'), 'no start of the secret left at the cut');
  assert.equal(cut('😀😀', 3), '😀\n…[cut: 2 more characters not shown]', 'never half a surrogate pair');
});

test('isError: the tool failed, as an mcp.tool_failed error carrying the marked text', () => {
  assert.throws(
    () => renderResult('fx', 'fail', { content: [{ type: 'text', text: 'order 42 does not exist' }], isError: true }),
    (err: unknown) => isAppError(err, 'mcp.tool_failed') && err.message === `${sourceLine('fx', 'fail')}\norder 42 does not exist\n${endLine('fail')}`,
  );
});
