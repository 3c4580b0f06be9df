import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { testConfig } from '../../helpers/workspace.js';
import { createApp } from '../../../src/app/app.js';
import { text, toolCalls, type RecordedRequest } from '../../helpers/fake-llm.js';
import { EMPTY_ANSWER } from '../../../src/features/answer/loop.js';
import { patient } from '../../helpers/wait.js';

async function sessionFile(bot: TestBot, chatId: string): Promise<any> {
  return JSON.parse(await readFile(path.join(bot.workspace, 'sessions', `test:${chatId}.json`), 'utf8'));
}

/** The `tool` messages of a request, by tool_call_id. */
function toolResults(req: RecordedRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of req.body.messages as any[]) if (m.role === 'tool') out.set(m.tool_call_id, m.content);
  return out;
}

/** First request asks for `calls`, every later one answers `final`. */
function toolThenText(calls: Parameters<typeof toolCalls>[0], final = 'final answer') {
  return (_req: RecordedRequest, index: number) => (index === 0 ? toolCalls(calls) : text(final));
}

test('a valid tool call runs, its result goes back to the model, and the whole exchange is saved', async () => {
  const bot = await startTestBot({
    responder: toolThenText([{ id: 'call_tokyo', name: 'get_current_time', args: { timezone: 'Asia/Tokyo' } }], 'It is evening in Tokyo.'),
  });
  try {
    const replies = await bot.send('1', 'what time is it in Tokyo?');
    assert.deepEqual(replies, ['It is evening in Tokyo.']);

    const reqs = bot.llm.chatRequests();
    assert.equal(reqs.length, 2);
    const msgs = reqs[1]!.body.messages as any[];
    const assistantIdx = msgs.findIndex((m) => m.role === 'assistant' && Array.isArray(m.tool_calls));
    assert.ok(assistantIdx > 0, 'second request carries the assistant tool-call message');
    const assistant = msgs[assistantIdx];
    assert.equal(assistant.tool_calls.length, 1);
    assert.equal(assistant.tool_calls[0].id, 'call_tokyo');
    assert.equal(assistant.tool_calls[0].type, 'function');
    assert.equal(assistant.tool_calls[0].function.name, 'get_current_time');
    assert.deepEqual(JSON.parse(assistant.tool_calls[0].function.arguments), { timezone: 'Asia/Tokyo' });

    const tool = msgs[assistantIdx + 1];
    assert.equal(tool.role, 'tool', 'the tool result directly follows the call');
    assert.equal(tool.tool_call_id, 'call_tokyo');
    const result = JSON.parse(tool.content);
    assert.equal(result.timezone, 'Asia/Tokyo');
    assert.match(result.iso, /\+09:00$/);
    assert.ok(Math.abs(Date.parse(result.iso) - Date.now()) < 60_000, `tool time ${result.iso} is now`);

    const file = await sessionFile(bot, '1');
    assert.deepEqual(
      file.messages.map((m: any) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    const [user, call, res, answer] = file.messages;
    assert.equal(user.content, 'what time is it in Tokyo?');
    assert.deepEqual(call.toolCalls, [{ id: 'call_tokyo', name: 'get_current_time', arguments: '{"timezone":"Asia/Tokyo"}' }]);
    assert.equal(res.toolCallId, 'call_tokyo');
    assert.equal(res.toolName, 'get_current_time');
    assert.equal(JSON.parse(res.content).timezone, 'Asia/Tokyo');
    assert.equal(answer.content, 'It is evening in Tokyo.');
    assert.equal(answer.toolCalls, undefined);
  } finally {
    await bot.close();
  }
});

test('an unknown tool name comes back to the model as a result listing the available tools', async () => {
  const bot = await startTestBot({
    responder: toolThenText([{ id: 'call_w', name: 'get_weather', args: { city: 'Oslo' } }], 'I cannot check the weather.'),
  });
  try {
    const replies = await bot.send('2', 'weather in Oslo?');
    assert.deepEqual(replies, ['I cannot check the weather.']);
    const reqs = bot.llm.chatRequests();
    assert.equal(reqs.length, 2);
    const content = toolResults(reqs[1]!).get('call_w');
    assert.ok(content, 'a tool result answers call_w');
    assert.match(content, /no tool named "get_weather"/);
    assert.match(content, /Available tools: .*get_current_time/);
    const file = await sessionFile(bot, '2');
    assert.deepEqual(
      file.messages.map((m: any) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
  } finally {
    await bot.close();
  }
});

test('bad arguments (not JSON, wrong type, extra property) and an unknown time zone become tool results; the turn answers', async () => {
  const bot = await startTestBot({
    responder: toolThenText(
      [
        { id: 'c_json', name: 'get_current_time', args: '{"timezone": "Asia/Tokyo"' },
        { id: 'c_type', name: 'get_current_time', args: { timezone: 5 } },
        { id: 'c_extra', name: 'get_current_time', args: { timezone: 'UTC', city: 'Paris' } },
        { id: 'c_mars', name: 'get_current_time', args: { timezone: 'Mars/Base' } },
        { id: 'c_ok', name: 'get_current_time', args: {} },
      ],
      'Sorted that out.',
    ),
  });
  try {
    const replies = await bot.send('3', 'time please');
    assert.deepEqual(replies, ['Sorted that out.']);
    const reqs = bot.llm.chatRequests();
    assert.equal(reqs.length, 2);
    const results = toolResults(reqs[1]!);
    assert.deepEqual([...results.keys()], ['c_json', 'c_type', 'c_extra', 'c_mars', 'c_ok'], 'one result per call, in call order');
    assert.match(results.get('c_json')!, /not valid JSON/);
    assert.match(results.get('c_type')!, /invalid arguments/);
    assert.match(results.get('c_type')!, /timezone must be a string/);
    assert.match(results.get('c_extra')!, /invalid arguments/);
    assert.match(results.get('c_extra')!, /city/);
    assert.match(results.get('c_mars')!, /^Error: .*Mars\/Base/);
    // No timezone given: the configured one (TZ=UTC in tests) is used.
    assert.equal(JSON.parse(results.get('c_ok')!).timezone, 'UTC');

    const file = await sessionFile(bot, '3');
    assert.deepEqual(
      file.messages.map((m: any) => m.role),
      ['user', 'assistant', 'tool', 'tool', 'tool', 'tool', 'tool', 'assistant'],
    );
    // The raw (broken) arguments are kept verbatim.
    assert.equal(file.messages[1].toolCalls[0].arguments, '{"timezone": "Asia/Tokyo"');
  } finally {
    await bot.close();
  }
});

test('after MAX_TOOL_ITERATIONS rounds the model is asked once more with tools off', async () => {
  const bot = await startTestBot({
    env: { MAX_TOOL_ITERATIONS: '3' },
    responder: (req) => (req.body.tool_choice === 'none' ? text('Enough tools, here is the answer.') : toolCalls([{ name: 'get_current_time', args: {} }])),
  });
  try {
    const replies = await bot.send('4', 'loop forever');
    assert.deepEqual(replies, ['Enough tools, here is the answer.']);
    const reqs = bot.llm.chatRequests();
    assert.deepEqual(
      reqs.map((r) => r.body.tool_choice),
      ['auto', 'auto', 'auto', 'none'],
    );
    const file = await sessionFile(bot, '4');
    assert.equal(file.messages.filter((m: any) => m.role === 'tool').length, 3);
    assert.equal(file.messages.at(-1).content, 'Enough tools, here is the answer.');
  } finally {
    await bot.close();
  }
});

test('a server that ignores tool_choice "none" still cannot make the loop run past the cap', async () => {
  const bot = await startTestBot({
    env: { MAX_TOOL_ITERATIONS: '2' },
    responder: () => toolCalls([{ name: 'get_current_time', args: {} }]),
  });
  try {
    const replies = await bot.send('5', 'loop forever');
    assert.deepEqual(replies, [EMPTY_ANSWER]);
    assert.equal(bot.llm.chatRequests().length, 3);
    const file = await sessionFile(bot, '5');
    assert.equal(file.messages.filter((m: any) => m.role === 'tool').length, 2);
    assert.equal(file.messages.at(-1).role, 'assistant');
    assert.equal(file.messages.at(-1).content, EMPTY_ANSWER);
  } finally {
    await bot.close();
  }
});

test('a tool that throws and a tool that times out give error results; the turn still answers', async () => {
  const bot = await startTestBot({
    env: { TOOL_TIMEOUT_MS: '200' },
    responder: toolThenText(
      [
        { id: 'c_boom', name: 'explode', args: {} },
        { id: 'c_slow', name: 'slow', args: {} },
      ],
      'Both tools had trouble.',
    ),
  });
  let slowSignal: AbortSignal | undefined;
  bot.app.parts.tools.register({
    name: 'explode',
    description: 'always throws',
    parameters: { type: 'object', properties: {} },
    execute() {
      throw new Error('kaboom');
    },
  });
  bot.app.parts.tools.register({
    name: 'slow',
    description: 'never finishes on its own',
    parameters: { type: 'object', properties: {} },
    execute(_args, { signal }) {
      slowSignal = signal;
      return new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve('too late'), { once: true }));
    },
  });
  try {
    const t0 = performance.now();
    const replies = await bot.send('6', 'use the tools');
    const elapsed = performance.now() - t0;
    assert.deepEqual(replies, ['Both tools had trouble.']);
    assert.ok(elapsed >= 180, `waited for the tool timeout (${elapsed} ms)`);
    assert.ok(elapsed < patient(5_000), `did not wait much past the tool timeout (${elapsed} ms)`);

    const reqs = bot.llm.chatRequests();
    assert.equal(reqs.length, 2);
    const offered = (reqs[0]!.body.tools as any[]).map((t) => t.function.name);
    for (const name of ['get_current_time', 'explode', 'slow']) assert.ok(offered.includes(name), `${name} is offered to the model`);
    const results = toolResults(reqs[1]!);
    assert.match(results.get('c_boom')!, /"explode" failed: kaboom/);
    assert.match(results.get('c_slow')!, /"slow" did not finish within 200 ms/);
    assert.equal(slowSignal?.aborted, true, 'the timed-out tool was told to stop');
  } finally {
    await bot.close();
  }
});

test('risk: one malformed tool call (arguments as an object, function.name null, no id) bricks the chat — normalized or answered as tool errors before it is stored', async () => {
  const malformed = {
    json: {
      id: 'chatcmpl-bad',
      object: 'chat.completion',
      created: 0,
      model: 'fake-model',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c_obj', type: 'function', function: { name: 'get_current_time', arguments: { timezone: 'UTC' } } },
              { id: 'c_null', type: 'function', function: { name: null, arguments: '{}' } },
              { id: null, function: { name: 'get_current_time' } },
              { id: 'c_obj', type: 'function', function: { name: 'functions.get time', arguments: 7 } },
            ],
          },
        },
      ],
    },
  };
  const bot = await startTestBot({ responder: (req, i) => (i === 0 ? malformed : text(`ok: ${req.body.messages.at(-1).role}`)) });
  try {
    assert.deepEqual(await bot.send('7', 'what time is it?'), ['ok: tool']);
    const req = bot.llm.chatRequests()[1]!;
    const call = (req.body.messages as any[]).find((m) => m.role === 'assistant' && m.tool_calls);
    // Everything sent back is well-typed: string ids (unique), valid names, JSON-text arguments.
    for (const c of call.tool_calls) {
      assert.equal(typeof c.id, 'string');
      assert.match(c.function.name, /^[A-Za-z0-9_-]{1,64}$/);
      assert.equal(typeof c.function.arguments, 'string');
    }
    assert.equal(new Set(call.tool_calls.map((c: any) => c.id)).size, 4, 'ids are unique');
    const results = [...toolResults(req).values()];
    assert.equal(results.length, 4, 'each call has a result');
    assert.equal(JSON.parse(results[0]!).timezone, 'UTC', 'arguments sent as an object are used');
    assert.match(results[1]!, /^Error: .*no (function )?name/);
    assert.equal(JSON.parse(results[2]!).timezone, 'UTC', 'missing arguments mean no arguments');
    assert.match(results[3]!, /^Error: /);

    // The chat goes on: the next turn, /status, and the same after a restart.
    assert.deepEqual(await bot.send('7', 'and now?'), ['ok: user']);
    assert.match((await bot.send('7', '/status'))[0]!, /^📊 Status/);
    await bot.app.stop();
    const again = await createApp(testConfig({ OPENAI_BASE_URL: bot.llm.url, WORKSPACE_DIR: bot.workspace }), bot.logs.log);
    const got: string[] = [];
    await again.handle(
      { channel: 'test', chatId: '7', userId: 'u', text: 'after restart', messageId: '900', receivedAt: new Date() },
      async (r) => void got.push(r),
    );
    await again.handle(
      { channel: 'test', chatId: '7', userId: 'u', text: '/status', messageId: '901', receivedAt: new Date(), role: 'owner' },
      async (r) => void got.push(r),
    );
    await again.stop();
    assert.equal(got[0], 'ok: user');
    assert.match(got[1]!, /^📊 Status/);
  } finally {
    await bot.llm.close();
    await rm(bot.workspace, { recursive: true, force: true });
  }
});
