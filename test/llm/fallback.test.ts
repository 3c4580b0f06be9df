/**
 * LLM_FALLBACK (issue 28, item 3): the real client against the fake OpenAI-compatible server,
 * which fails for one model (by the request's `model`) and answers for the others. Counts are
 * requests the server received per model.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmClient } from '../../src/llm/client.js';
import type { LlmObservers } from '../../src/llm/call.js';
import { lastUserText, memoryAwareResponder, promptKind, startFakeLlm, text, type FakeLlm, type FakeReply, type RecordedRequest } from '../helpers/fake-llm.js';
import { llmFailure as failure } from '../helpers/llm-failure.js';
import { loadedSession, startTestBot } from '../helpers/app.js';
import { captureLog, testConfig } from '../helpers/workspace.js';

const MESSAGES = [{ role: 'user' as const, content: 'hi' }];

/** Requests per model, in the order first seen. */
export function perModel(requests: RecordedRequest[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of requests) if (r.path.endsWith('/chat/completions')) out[r.body.model] = (out[r.body.model] ?? 0) + 1;
  return out;
}

/** `failing` answers with `reply`; any other model answers "from <model>". */
function failFor(failing: string, reply: FakeReply) {
  return (req: RecordedRequest): FakeReply => (req.body.model === failing ? reply : text(`from ${req.body.model}`));
}

async function withServer(responder: (req: RecordedRequest) => FakeReply, fn: (llm: FakeLlm) => Promise<void>): Promise<void> {
  const llm = await startFakeLlm(responder);
  try {
    await fn(llm);
  } finally {
    await llm.close();
  }
}

function client(url: string, env: Record<string, string>, observers: LlmObservers = {}) {
  const logs = captureLog();
  return { llm: new LlmClient(testConfig({ OPENAI_BASE_URL: url, LLM_MODEL: 'model-a', ...env }), logs.log, observers), logs };
}

test('model A answers 500: retried (1 + LLM_MAX_RETRIES requests), then model B answers once; the log names both', async () => {
  await withServer(failFor('model-a', { status: 500 }), async (server) => {
    const { llm, logs } = client(server.url, { LLM_MAX_RETRIES: '2', LLM_FALLBACK: 'model-b,model-c' });
    const res = await llm.chat({ messages: MESSAGES });
    assert.equal(res.content, 'from model-b');
    assert.equal(res.model, 'model-b');
    assert.equal(res.fallbackFrom, 'model-a');
    assert.deepEqual(perModel(server.requests), { 'model-a': 3, 'model-b': 1 });
    const line = logs.lines().find((l) => l.msg?.startsWith('answered by'));
    assert.ok(line, 'an info line says which model answered');
    assert.equal(line.level, 30);
    assert.equal(line.model, 'model-b');
    assert.equal(line.fallbackFrom, 'model-a');
  });
});

test('model A times out: LLM_TIMEOUT_MS per try, retried, then model B', async () => {
  await withServer(failFor('model-a', { hang: true }), async (server) => {
    const { llm } = client(server.url, { LLM_MAX_RETRIES: '1', LLM_TIMEOUT_MS: '200', LLM_FALLBACK: 'model-b' });
    const res = await llm.chat({ messages: MESSAGES });
    assert.equal(res.content, 'from model-b');
    assert.deepEqual(perModel(server.requests), { 'model-a': 2, 'model-b': 1 });
  });
});

test('a 429 past its retry budget falls over; a refused model (404 model_not_found) at once, with no retry', async () => {
  await withServer(failFor('model-a', { status: 429, headers: { 'retry-after': '0' } }), async (server) => {
    const { llm } = client(server.url, { LLM_MAX_RETRIES: '1', LLM_FALLBACK: 'model-b' });
    assert.equal((await llm.chat({ messages: MESSAGES })).content, 'from model-b');
    assert.deepEqual(perModel(server.requests), { 'model-a': 2, 'model-b': 1 });
  });
  const notFound = {
    status: 404,
    json: { error: { message: 'The model `model-a` does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' } },
  };
  await withServer(failFor('model-a', notFound), async (server) => {
    const { llm } = client(server.url, { LLM_MAX_RETRIES: '2', LLM_FALLBACK: 'model-b' });
    assert.equal((await llm.chat({ messages: MESSAGES })).content, 'from model-b');
    assert.deepEqual(perModel(server.requests), { 'model-a': 1, 'model-b': 1 });
  });
  // A server that says it with a 400 (OpenRouter, some proxies).
  const unknown = { status: 400, json: { error: { message: 'model-a is not a valid model ID' } } };
  await withServer(failFor('model-a', unknown), async (server) => {
    const { llm } = client(server.url, { LLM_FALLBACK: 'model-b' });
    assert.equal((await llm.chat({ messages: MESSAGES })).content, 'from model-b');
  });
});

test('never on a 4xx the request caused: a 400, a 422, a too-long request go back as they are, model B not asked', async () => {
  const cases: Array<[FakeReply, string]> = [
    [{ status: 400, json: { error: { message: "Invalid value for 'messages[0].role'", type: 'invalid_request_error' } } }, 'llm.rejected'],
    [{ status: 422, json: { error: { message: 'Unprocessable entity: temperature out of range' } } }, 'llm.rejected'],
    [
      { status: 400, json: { error: { message: "This model's maximum context length is 8192 tokens.", code: 'context_length_exceeded' } } },
      'llm.context_length_exceeded',
    ],
  ];
  for (const [reply, code] of cases) {
    await withServer(failFor('model-a', reply), async (server) => {
      const { llm } = client(server.url, { LLM_MAX_RETRIES: '2', LLM_FALLBACK: 'model-b' });
      const err = await failure(llm.chat({ messages: MESSAGES }));
      assert.equal(err.code, code);
      assert.deepEqual(perModel(server.requests), { 'model-a': 1 }, `${reply.status}: model B is not asked`);
    });
  }
});

test('every model fails: the last failure is thrown, after each model was tried in order', async () => {
  await withServer(
    () => ({ status: 503 }),
    async (server) => {
      const { llm } = client(server.url, { LLM_MAX_RETRIES: '0', LLM_FALLBACK: 'model-b,model-c' });
      const err = await failure(llm.chat({ messages: MESSAGES }));
      assert.equal(err.code, 'llm.rejected');
      assert.equal(err.status, 503);
      assert.deepEqual(
        server.chatRequests().map((r) => r.body.model),
        ['model-a', 'model-b', 'model-c'],
      );
    },
  );
});

test("streamed: model A fails before any text, model B streams the answer; the text shown is B's only", async () => {
  await withServer(failFor('model-a', { status: 502 }), async (server) => {
    const { llm } = client(server.url, { LLM_FALLBACK: 'model-b' });
    const seen: string[] = [];
    const res = await llm.chat({ messages: MESSAGES, onText: (t) => seen.push(t) });
    assert.equal(res.content, 'from model-b');
    assert.equal(seen.at(-1), 'from model-b');
    assert.ok(seen.every((t) => 'from model-b'.startsWith(t)));
  });
});

test('a model on its own server with its own key (LLM_MODELS name=URL|VARIABLE): the fallback goes there with that key', async () => {
  const main = await startFakeLlm(() => ({ status: 500 }));
  const other = await startFakeLlm((req) => text(`other server, ${req.body.model}`));
  try {
    const { llm } = client(main.url, { LLM_MODELS: `model-b=${other.url}|OTHER_KEY`, OTHER_KEY: 'sk-other-key-987654', LLM_FALLBACK: 'model-b' });
    const res = await llm.chat({ messages: MESSAGES });
    assert.equal(res.content, 'other server, model-b');
    assert.equal(main.chatRequests().length, 1);
    assert.equal(other.chatRequests()[0]!.headers.authorization, 'Bearer sk-other-key-987654');
    assert.equal(main.chatRequests()[0]!.headers.authorization, 'Bearer sk-test-key-123456', 'the default server keeps OPENAI_API_KEY');
  } finally {
    await main.close();
    await other.close();
  }
});

test('before a fallback model is asked, the request is fitted to it (refit); usage is recorded under the model that answered', async () => {
  await withServer(failFor('model-a', { status: 500 }), async (server) => {
    const usage: string[] = [];
    const { llm } = client(server.url, { LLM_FALLBACK: 'model-b' }, { usageSink: (_account, _u, model) => usage.push(model) });
    const shorter = [{ role: 'user' as const, content: 'short' }];
    const asked: string[] = [];
    await llm.chat({ messages: MESSAGES, account: { chat: 'test:1', kind: 'answer' }, refit: async (model) => (asked.push(model), shorter) });
    assert.deepEqual(asked, ['model-b']);
    assert.equal(server.chatRequests().at(-1)!.body.messages[0].content, 'short');
    assert.deepEqual(usage, ['model-b']);
  });
});

test('through the daemon: model A answers 500s, model B takes over — the reply says nothing of it, /status, the log and usage.db name B', async (t) => {
  const bot = await startTestBot({
    env: { LLM_MODEL: 'model-a', LLM_FALLBACK: 'model-b', LLM_MAX_RETRIES: '2' },
    responder: failFor('model-a', { status: 500 }),
  });
  try {
    assert.deepEqual(await bot.send('1', 'hello'), ['from model-b']);
    const counts = perModel(bot.llm.requests);
    t.diagnostic(`requests per model: ${JSON.stringify(counts)}`);
    assert.deepEqual(counts, { 'model-a': 3, 'model-b': 1 }, 'A: the first try and 2 retries; then B once');
    const [status] = await bot.send('1', '/status full');
    assert.match(status!, /^Model: model-a \(summaries: model-a\) · text only · fallback: model-b$/m);
    assert.match(status!, /^Last answer by model-b \(fallback from model-a, which failed\)$/m);
    const line = bot.logs.lines().find((l) => l.msg?.endsWith('answered by model-b, the fallback for model-a'));
    assert.ok(
      line && line.model === 'model-b' && line.fallbackFrom === 'model-a' && line.chat === 'test:1' && line.kind === 'answer',
      'one info line with model and fallbackFrom',
    );
    assert.deepEqual(
      (await bot.app.parts.usage.byModel('test:1')).map((r) => [r.model, r.calls]),
      [['model-b', 1]],
      'usage is recorded under the model that answered',
    );
    // Every model fails: the usual apology, nothing about fallbacks.
    bot.llm.setResponder(() => ({ status: 503 }));
    const [apology] = await bot.send('1', 'and now?');
    assert.match(apology!, /^Sorry, something went wrong while answering \(error id \w+\)\. The language model is not answering right now\./);
  } finally {
    await bot.close();
  }
});

test('background calls fall back too: the summary of /compact is written by model B when model A is down', async () => {
  const bot = await startTestBot({
    env: { LLM_MODEL: 'model-a', LLM_FALLBACK: 'model-b' },
    responder: (req) => (req.body.model === 'model-a' ? { status: 500 } : memoryAwareResponder(req, 0)),
  });
  try {
    for (let i = 0; i < 4; i++) await bot.send('1', `message ${i}`);
    const [said] = await bot.send('1', '/compact 2');
    assert.match(said!, /summar/i, said);
    const summaries = bot.llm.chatRequests().filter((r) => promptKind(r) === 'summary');
    assert.deepEqual(
      summaries.map((r) => r.body.model),
      ['model-a', 'model-b'],
    );
    assert.ok(loadedSession(bot, '1').messages[0]!.content.startsWith('[Conversation summary]'), 'the summary made it into the session');
  } finally {
    await bot.close();
  }
});

test('a fallback with a smaller context gets the request fitted to it before it is asked (ContextFit), not refused as too long', async () => {
  // gpt-4o-mini (limit 50,000 here) is down; gpt-4 holds 8,192 tokens and the conversation is ~20,000.
  const bot = await startTestBot({
    env: { LLM_MODEL: 'gpt-4o-mini', LLM_FALLBACK: 'gpt-4' },
    responder: (req) =>
      req.body.model === 'gpt-4o-mini'
        ? promptKind(req) === 'chat' && lastUserText(req) === 'and now?'
          ? { status: 500 }
          : memoryAwareResponder(req, 0)
        : memoryAwareResponder(req, 0),
  });
  try {
    for (let i = 0; i < 10; i++) await bot.send('1', `note ${i}: ${'plenty of words in this message '.repeat(60)}`);
    const [reply] = await bot.send('1', 'and now?');
    assert.match(reply!, /^echo: and now\?/);
    assert.match(reply!, /Compacted the conversation/, 'the compaction is told, as any compaction is');
    const last = bot.llm.chatRequests().at(-1)!;
    assert.equal(last.body.model, 'gpt-4');
    const gpt4 = bot.app.parts.models.get('gpt-4')!;
    const sent = gpt4.tokens.countMessages(last.body.messages) + gpt4.tokens.countTools(last.body.tools ?? []);
    assert.ok(sent <= 8192, `the request sent to gpt-4 holds ${sent} tokens, within its 8,192`);
  } finally {
    await bot.close();
  }
});
