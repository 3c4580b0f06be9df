import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmClient } from '../../src/llm/client.js';
import { startFakeLlm, text, type FakeLlm, type Responder } from '../helpers/fake-llm.js';
import { llmFailure as failure } from '../helpers/llm-failure.js';
import { captureLog, testConfig } from '../helpers/workspace.js';
import { patient } from '../helpers/wait.js';

const API_KEY = 'sk-test-key-123456';
const MESSAGES = [{ role: 'user' as const, content: 'hi' }];

async function withServer(responder: Responder, fn: (llm: FakeLlm) => Promise<void>): Promise<void> {
  const llm = await startFakeLlm(responder);
  try {
    await fn(llm);
  } finally {
    await llm.close();
  }
}

function client(url: string, env: Record<string, string> = {}): LlmClient {
  return new LlmClient(testConfig({ OPENAI_BASE_URL: url, OPENAI_API_KEY: API_KEY, ...env }), captureLog().log);
}

/** Replies with `status` for the first `times` requests, then with a normal answer. */
function failThenOk(times: number, status: number, headers: Record<string, string> = {}): Responder {
  return (_req, i) => (i < times ? { status, headers } : text('recovered'));
}

test('a 429 with retry-after: 1 is retried after about a second', async () => {
  const at: number[] = [];
  await withServer(
    (_req, i) => {
      at.push(performance.now());
      return failThenOk(1, 429, { 'retry-after': '1' })(_req, i);
    },
    async (llm) => {
      const res = await client(llm.url, { LLM_MAX_RETRIES: '2' }).chat({ messages: MESSAGES });
      assert.equal(res.content, 'recovered');
      assert.equal(llm.chatRequests().length, 2);
      const gap = at[1]! - at[0]!;
      assert.ok(gap >= 900, `waited ${Math.round(gap)} ms, retry-after asked for 1000`);
    },
  );
});

test('a 429 asking to wait longer than we are willing to is not waited for', async () => {
  await withServer(failThenOk(99, 429, { 'retry-after': '3600' }), async (llm) => {
    const t0 = performance.now();
    const err = await failure(client(llm.url, { LLM_MAX_RETRIES: '2' }).chat({ messages: MESSAGES }));
    assert.ok(performance.now() - t0 < patient(2_000), 'failed at once instead of sleeping an hour');
    assert.equal(err.code, 'llm.rate_limited');
    assert.equal(err.status, 429);
    assert.equal(llm.chatRequests().length, 1);
  });
});

test('429 until retries run out gives llm.rate_limited after 1 + retries requests', async () => {
  await withServer(failThenOk(99, 429, { 'retry-after': '0' }), async (llm) => {
    const err = await failure(client(llm.url, { LLM_MAX_RETRIES: '2' }).chat({ messages: MESSAGES }));
    assert.equal(err.code, 'llm.rate_limited');
    assert.equal(err.kind, 'rejected');
    assert.equal(llm.chatRequests().length, 3);
  });
});

test('500 twice then success: retried and succeeds on the third request', async () => {
  await withServer(failThenOk(2, 500), async (llm) => {
    const res = await client(llm.url, { LLM_MAX_RETRIES: '2' }).chat({ messages: MESSAGES });
    assert.equal(res.content, 'recovered');
    assert.equal(llm.chatRequests().length, 3);
  });
});

test('500 with retries off: llm.rejected, kind rejected, status 500, one request', async () => {
  await withServer(failThenOk(2, 500), async (llm) => {
    const err = await failure(client(llm.url, { LLM_MAX_RETRIES: '0' }).chat({ messages: MESSAGES }));
    assert.equal(err.code, 'llm.rejected');
    assert.equal(err.kind, 'rejected');
    assert.equal(err.status, 500);
    assert.equal(llm.chatRequests().length, 1);
  });
});

test('the per-call retries option overrides LLM_MAX_RETRIES', async () => {
  await withServer(failThenOk(1, 503, { 'retry-after-ms': '0' }), async (llm) => {
    const err = await failure(client(llm.url, { LLM_MAX_RETRIES: '2' }).chat({ messages: MESSAGES, retries: 0 }));
    assert.equal(err.status, 503);
    assert.equal(llm.chatRequests().length, 1);
  });
});

test('a 400 about the context length is llm.context_length_exceeded and is not retried', async () => {
  await withServer(
    () => ({
      status: 400,
      json: {
        error: {
          message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
          type: 'invalid_request_error',
          code: null,
        },
      },
    }),
    async (llm) => {
      const err = await failure(client(llm.url, { LLM_MAX_RETRIES: '2' }).chat({ messages: MESSAGES }));
      assert.equal(err.code, 'llm.context_length_exceeded');
      assert.equal(err.kind, 'rejected');
      assert.equal(err.status, 400);
      assert.equal(llm.chatRequests().length, 1);
    },
  );
});

test('another 400 is llm.rejected and is not retried', async () => {
  await withServer(
    () => ({ status: 400, json: { error: { message: 'Invalid value for tool_choice', type: 'invalid_request_error' } } }),
    async (llm) => {
      const err = await failure(client(llm.url, { LLM_MAX_RETRIES: '2' }).chat({ messages: MESSAGES }));
      assert.equal(err.code, 'llm.rejected');
      assert.equal(err.status, 400);
      assert.equal(llm.chatRequests().length, 1);
    },
  );
});

test('a server that never answers: llm.timeout (unreachable) after LLM_TIMEOUT_MS', async () => {
  await withServer(
    () => ({ hang: true }),
    async (llm) => {
      const t0 = performance.now();
      const err = await failure(client(llm.url, { LLM_TIMEOUT_MS: '300' }).chat({ messages: MESSAGES }));
      const elapsed = performance.now() - t0;
      assert.equal(err.code, 'llm.timeout');
      assert.equal(err.kind, 'unreachable');
      assert.equal(err.status, undefined);
      assert.ok(elapsed >= 250 && elapsed < patient(5_000), `gave up after ${Math.round(elapsed)} ms`);
      assert.equal(llm.chatRequests().length, 1);
    },
  );
});

test('a timeout is retried like a connection failure', async () => {
  await withServer(
    (_req, i) => (i === 0 ? { hang: true } : text('second try')),
    async (llm) => {
      const res = await client(llm.url, { LLM_TIMEOUT_MS: '300', LLM_MAX_RETRIES: '1' }).chat({ messages: MESSAGES });
      assert.equal(res.content, 'second try');
      assert.equal(llm.chatRequests().length, 2);
    },
  );
});

test('a cut connection is llm.unreachable (kind unreachable)', async () => {
  await withServer(
    () => ({ destroy: true }),
    async (llm) => {
      const err = await failure(client(llm.url).chat({ messages: MESSAGES }));
      assert.equal(err.code, 'llm.unreachable');
      assert.equal(err.kind, 'unreachable');
      assert.equal(err.status, undefined);
    },
  );
});

test('nothing listening is llm.unreachable', async () => {
  const llm = await startFakeLlm();
  await llm.close();
  const err = await failure(client(llm.url).chat({ messages: MESSAGES }));
  assert.equal(err.code, 'llm.unreachable');
  assert.equal(err.kind, 'unreachable');
});

test('a 200 without choices is llm.bad_response', async () => {
  await withServer(
    () => ({ json: { id: 'x', object: 'chat.completion', created: 0, model: 'fake', choices: [] } }),
    async (llm) => {
      const err = await failure(client(llm.url).chat({ messages: MESSAGES }));
      assert.equal(err.code, 'llm.bad_response');
    },
  );
});

test('a successful answer: content, tool calls, usage and model are returned', async () => {
  await withServer(
    () => ({
      json: {
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'served-model',
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_current_time', arguments: '{}' } }],
            },
          },
        ],
        usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
      },
    }),
    async (llm) => {
      const res = await client(llm.url).chat({ messages: MESSAGES });
      assert.equal(res.content, '');
      assert.deepEqual(res.toolCalls, [{ id: 'c1', name: 'get_current_time', arguments: '{}' }]);
      assert.equal(res.finishReason, 'tool_calls');
      assert.deepEqual(res.usage, { promptTokens: 12, cachedTokens: 0, completionTokens: 3 });
      assert.equal(res.model, 'gpt-4o-mini', 'the model asked, as configured');
      assert.equal(res.served, 'served-model', 'and the name the server gave it');
    },
  );
});

test('reasoning models get max_completion_tokens and no temperature', async () => {
  await withServer(
    () => text('ok'),
    async (llm) => {
      await client(llm.url, { LLM_MODEL: 'o3-mini' }).chat({ messages: MESSAGES, maxTokens: 123, temperature: 0.2 });
      const body = llm.chatRequests()[0]!.body;
      assert.equal(body.model, 'o3-mini');
      assert.equal(body.max_completion_tokens, 123);
      assert.equal('max_tokens' in body, false);
      assert.equal('temperature' in body, false);
    },
  );
});

test('a provider-prefixed reasoning model (openai/gpt-5-mini) is treated as one too', async () => {
  await withServer(
    () => text('ok'),
    async (llm) => {
      await client(llm.url, { LLM_MODEL: 'openai/gpt-5-mini' }).chat({ messages: MESSAGES, maxTokens: 50, temperature: 0.7 });
      const body = llm.chatRequests()[0]!.body;
      assert.equal(body.max_completion_tokens, 50);
      assert.equal('max_tokens' in body, false);
      assert.equal('temperature' in body, false);
    },
  );
});

test('other models get max_tokens and temperature', async () => {
  await withServer(
    () => text('ok'),
    async (llm) => {
      await client(llm.url, { LLM_MODEL: 'gpt-4o-mini' }).chat({ messages: MESSAGES, maxTokens: 123, temperature: 0.2 });
      const body = llm.chatRequests()[0]!.body;
      assert.equal(body.model, 'gpt-4o-mini');
      assert.equal(body.max_tokens, 123);
      assert.equal(body.temperature, 0.2);
      assert.equal('max_completion_tokens' in body, false);
    },
  );
});

test('the balanced tier uses LLM_MODEL_BALANCED', async () => {
  await withServer(
    () => text('ok'),
    async (llm) => {
      await client(llm.url, { LLM_MODEL: 'gpt-4o', LLM_MODEL_BALANCED: 'gpt-4o-mini' }).chat({ tier: 'balanced', messages: MESSAGES });
      assert.equal(llm.chatRequests()[0]!.body.model, 'gpt-4o-mini');
    },
  );
});

test('the API key is sent as a bearer token and never appears in an error message', async () => {
  let mode: string = 'ok';
  await withServer(
    () => {
      switch (mode) {
        case '401':
          return { status: 401, json: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } } };
        case '500':
          return { status: 500 };
        case '400':
          return { status: 400, json: { error: { message: 'maximum context length is 8192 tokens' } } };
        case 'destroy':
          return { destroy: true };
        case 'hang':
          return { hang: true };
        case 'empty':
          return { json: { choices: [] } };
        default:
          return text('ok');
      }
    },
    async (llm) => {
      const c = client(llm.url, { LLM_TIMEOUT_MS: '300' });
      await c.chat({ messages: MESSAGES });
      assert.equal(llm.chatRequests()[0]!.headers.authorization, `Bearer ${API_KEY}`);
      const seen: string[] = [];
      for (const m of ['401', '500', '400', 'destroy', 'hang', 'empty']) {
        mode = m;
        const err = await failure(c.chat({ messages: MESSAGES }));
        seen.push(err.code);
        for (const s of [err.message, String(err), err.stack ?? '']) {
          assert.ok(!s.includes(API_KEY), `${m}: error text leaks the key: ${s}`);
        }
      }
      assert.deepEqual(seen, ['llm.rejected', 'llm.rejected', 'llm.context_length_exceeded', 'llm.unreachable', 'llm.timeout', 'llm.bad_response']);
    },
  );
});
