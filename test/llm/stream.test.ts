import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmClient } from '../../src/llm/client.js';
import type { TokenUsage, UsageAccount } from '../../src/llm/accounting.js';
import { toolStatus } from '../../src/llm/stream.js';
import { startFakeLlm, text, toolCalls, type FakeReply } from '../helpers/fake-llm.js';
import { captureLog, testConfig } from '../helpers/workspace.js';

const MESSAGES = [{ role: 'user' as const, content: 'hi' }];
const ACCOUNT: UsageAccount = { chat: 'test:1', kind: 'answer' };

function client(url: string): { llm: LlmClient; usage: TokenUsage[] } {
  const usage: TokenUsage[] = [];
  const llm = new LlmClient(testConfig({ OPENAI_BASE_URL: url, OPENAI_API_KEY: 'sk-test-key-123456' }), captureLog().log, {
    usageSink: (_a, u) => usage.push(u),
  });
  return { llm, usage };
}

test('a streamed answer: the text grows piece by piece, the result and the usage are those of the whole answer', async () => {
  const answer = 'The quick brown fox jumps over the lazy dog, twice over.';
  const fake = await startFakeLlm(() => ({ ...text(answer), stream: { chunkChars: 5 } }));
  try {
    const { llm, usage } = client(fake.url);
    const seen: string[] = [];
    const res = await llm.chat({ messages: MESSAGES, account: ACCOUNT, onText: (t) => seen.push(t) });
    assert.equal(res.content, answer);
    assert.equal(fake.chatRequests()[0]!.body.stream, true);
    assert.deepEqual(fake.chatRequests()[0]!.body.stream_options, { include_usage: true });
    assert.equal(seen.length, Math.ceil(answer.length / 5), 'one update per streamed piece');
    assert.ok(
      seen.every((t, i) => i === 0 || t.startsWith(seen[i - 1]!)),
      'each update extends the one before',
    );
    assert.equal(seen.at(-1), answer);
    assert.deepEqual(usage, [{ promptTokens: 10, cachedTokens: 0, completionTokens: 5 }], 'usage recorded once, from the last event');
    assert.deepEqual(res.usage, { promptTokens: 10, cachedTokens: 0, completionTokens: 5 });
  } finally {
    await fake.close();
  }
});

test('tool calls streamed in fragments are put back together, each with its own arguments', async () => {
  const fake = await startFakeLlm(() => ({
    ...toolCalls([
      { name: 'search_memory', args: { query: 'where does Alice live?', limit: 5 }, id: 'call_a' },
      { name: 'get_current_time', args: {}, id: 'call_b' },
    ]),
    stream: { chunkChars: 3 },
  }));
  try {
    const { llm } = client(fake.url);
    const res = await llm.chat({ messages: MESSAGES, onText: () => undefined });
    assert.equal(res.finishReason, 'tool_calls');
    assert.equal(res.content, '');
    assert.deepEqual(
      res.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
      [
        { id: 'call_a', name: 'search_memory', arguments: JSON.stringify({ query: 'where does Alice live?', limit: 5 }) },
        { id: 'call_b', name: 'get_current_time', arguments: '{}' },
      ],
    );
  } finally {
    await fake.close();
  }
});

test('a server that streams without usage: the answer still arrives, nothing fails, and our own count is recorded as an estimate', async () => {
  const fake = await startFakeLlm(() => ({ ...text('no figures here'), stream: { usage: false } }));
  try {
    const { llm, usage } = client(fake.url);
    const res = await llm.chat({ messages: MESSAGES, account: ACCOUNT, onText: () => undefined });
    assert.equal(res.content, 'no figures here');
    assert.equal(res.usage, null);
    // No tokenizer given (the app gives the model's): characters / 3.5 — "user" + "hi" and the
    // chat framing (3 + 3) for the prompt (2 + 1 + 6), "no figures here" for the answer.
    assert.deepEqual(usage, [{ promptTokens: 9, cachedTokens: 0, completionTokens: 5, estimated: true }]);
  } finally {
    await fake.close();
  }
});

test('a server that refuses stream_options is asked again without it, and not asked with it again', async () => {
  const refuse: FakeReply = {
    status: 400,
    json: { error: { message: 'Unrecognized request argument supplied: stream_options', type: 'invalid_request_error' } },
  };
  const fake = await startFakeLlm((req) => (req.body.stream_options ? refuse : { ...text('streamed anyway') }));
  try {
    const { llm } = client(fake.url);
    const first = await llm.chat({ messages: MESSAGES, onText: () => undefined });
    const second = await llm.chat({ messages: MESSAGES, onText: () => undefined });
    assert.equal(first.content, 'streamed anyway');
    assert.equal(second.content, 'streamed anyway');
    assert.deepEqual(
      fake.chatRequests().map((r) => r.body.stream_options !== undefined),
      [true, false, false],
    );
  } finally {
    await fake.close();
  }
});

test('a server that answers a streamed request with plain JSON: a clear error, not an empty answer', async () => {
  const fake = await startFakeLlm(() => ({ raw: JSON.stringify({ not: 'a stream' }) }));
  try {
    const { llm } = client(fake.url);
    await assert.rejects(llm.chat({ messages: MESSAGES, retries: 0, onText: () => undefined }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'llm.bad_response');
      assert.match(err.message, /STREAMING=off/);
      return true;
    });
  } finally {
    await fake.close();
  }
});

test('an MCP tool\'s status names its server, not our memory (files__read_file is not "reading memory")', () => {
  assert.equal(toolStatus('files__read_file'), '🔌 asking files…');
  assert.equal(toolStatus('memory_search'), '🔎 searching memory…');
});
