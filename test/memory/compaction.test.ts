/**
 * AutoCompaction (18) through the real daemon and the fake OpenAI-compatible server: when it
 * fires (over 80 % of the limit, not at or below), how hard (over 90 %: half the kept tail),
 * what consolidation is given (exactly the removed messages), the invariants (tool-call pairs,
 * system messages, a valid next request), what the user is told, truncation by importance when
 * no summary can be had, bounded time when the LLM hangs, and "context length exceeded" from
 * the provider (one harder compaction and one retry, never a loop).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot, loadedSession } from '../helpers/app.js';
import { lastUserText, memoryAwareResponder, promptKind, text, toolCalls, type FakeReply, type RecordedRequest, type Responder } from '../helpers/fake-llm.js';
import { makeMessage, type SessionMessage } from '../../src/sessions/model.js';

// Room for the tool definitions sent with every request (about 680 tokens, reminder tools included).
const LIMIT = 2200;
const CHAT = 'c';
const SESSION_ID = `test:${CHAT}`;

// ---------------------------------------------------------------------------------------------
// helpers

/** Problems that would make the OpenAI chat API refuse the request (empty when valid). */
function requestProblems(messages: any[]): string[] {
  const problems: string[] = [];
  if (!Array.isArray(messages) || messages.length === 0) return ['no messages'];
  let open: Set<string> | null = null;
  messages.forEach((m, i) => {
    if (!['system', 'user', 'assistant', 'tool'].includes(m.role)) problems.push(`#${i}: bad role ${m.role}`);
    if (m.role === 'tool') {
      if (!open?.has(m.tool_call_id)) problems.push(`#${i}: tool result ${m.tool_call_id} without a preceding assistant call`);
      else open.delete(m.tool_call_id);
      return;
    }
    if (open && open.size > 0) problems.push(`#${i}: tool calls ${[...open].join(', ')} have no result before a ${m.role} message`);
    open = null;
    if ((m.role === 'user' || m.role === 'system') && typeof m.content !== 'string') problems.push(`#${i}: ${m.role} content is not a string`);
    if (m.role === 'assistant') {
      if (m.tool_calls?.length) {
        open = new Set(m.tool_calls.map((c: any) => c.id));
        for (const c of m.tool_calls) if (c.type !== 'function' || typeof c.function?.name !== 'string') problems.push(`#${i}: malformed tool call`);
      } else if (typeof m.content !== 'string') problems.push(`#${i}: assistant without content or tool calls`);
    }
  });
  if (open && (open as Set<string>).size > 0) problems.push(`tool calls ${[...(open as Set<string>)].join(', ')} have no result at the end`);
  return problems;
}

interface Rig {
  bot: TestBot;
  /** Chat requests the strict responder refused as invalid. */
  invalid: string[];
}

/**
 * A responder that answers like the OpenAI API would: an invalid chat request gets a 400.
 * Consolidation/summary prompts go to `other` (default: the cooperative memoryAwareResponder).
 */
function strict(
  chat: (req: RecordedRequest, i: number) => FakeReply | Promise<FakeReply>,
  invalid: string[],
  other: Responder = memoryAwareResponder,
): Responder {
  return (req, i) => {
    if (promptKind(req) !== 'chat') return other(req, i);
    const problems = requestProblems(req.body?.messages);
    if (problems.length > 0) {
      invalid.push(problems.join('; '));
      return { status: 400, json: { error: { message: `Invalid messages: ${problems.join('; ')}`, type: 'invalid_request_error' } } };
    }
    return chat(req, i);
  };
}

async function withBot(
  opts: {
    chat?: (req: RecordedRequest, i: number) => FakeReply | Promise<FakeReply>;
    other?: Responder;
    runtimeConfig?: unknown;
    env?: Record<string, string>;
  },
  fn: (r: Rig) => Promise<void>,
): Promise<void> {
  const invalid: string[] = [];
  const bot = await startTestBot({
    responder: strict(opts.chat ?? (() => text('ok')), invalid, opts.other),
    runtimeConfig: opts.runtimeConfig ?? { compaction: { maxContextTokens: LIMIT, keepLastMessages: 20 } },
    ...(opts.env ? { env: opts.env } : {}),
  });
  try {
    await fn({ bot, invalid });
  } finally {
    await bot.close();
  }
}

const session = (bot: TestBot) => loadedSession(bot, CHAT);

/** What system 18 will measure when `text` arrives as the next user message. */
function predict(bot: TestBot, text: string): number {
  const s = session(bot);
  s.messages.push(makeMessage('user', text));
  try {
    return bot.app.parts.compactor.usage(s).reserved;
  } finally {
    s.messages.pop();
  }
}

/**
 * A message `prefix` padded with words so that the measured request is the largest ≤ target
 * ('under') or the smallest > target ('over').
 */
function tune(bot: TestBot, prefix: string, target: number, mode: 'under' | 'over'): { text: string; tokens: number } {
  const make = (k: number) => (k === 0 ? prefix : `${prefix} ${Array.from({ length: k }, (_, j) => `w${j % 10}`).join(' ')}`);
  let lo = 0;
  let hi = 4000;
  // Smallest k with predict(make(k)) > target.
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (predict(bot, make(mid)) > target) hi = mid;
    else lo = mid + 1;
  }
  const k = mode === 'over' ? lo : lo - 1;
  assert.ok(k >= 0, `even "${prefix}" alone is over ${target} tokens (${predict(bot, prefix)})`);
  const t = make(k);
  return { text: t, tokens: predict(bot, t) };
}

/** Sends `make(i)` messages while each keeps the measured request ≤ `target`; returns how many. */
async function fill(bot: TestBot, target: number, make: (i: number) => string, max = 500): Promise<number> {
  let i = 0;
  for (; i < max; i++) {
    if (predict(bot, make(i)) > target) break;
    await bot.send(CHAT, make(i));
  }
  return i;
}

function kinds(bot: TestBot): Array<'consolidation' | 'summary' | 'chat'> {
  return bot.llm.chatRequests().map(promptKind);
}

function count(bot: TestBot, kind: 'consolidation' | 'summary' | 'chat', from = 0): number {
  return bot.llm
    .chatRequests()
    .slice(from)
    .filter((r) => promptKind(r) === kind).length;
}

/** `ROLE: content` of each message line of a consolidation prompt's "## Conversation to Process". */
function consolidatedLines(req: RecordedRequest): string[] {
  const prompt = String(req.body.messages[0].content);
  const at = prompt.indexOf('## Conversation to Process\n');
  assert.ok(at >= 0, 'consolidation prompt has the conversation section');
  const section = prompt.slice(at + '## Conversation to Process\n'.length).split('\n\n')[0]!;
  return section
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const m = /^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\] (.*)$/.exec(l);
      assert.ok(m, `unexpected line in the conversation section: ${l}`);
      return m[1]!;
    });
}

function asLine(m: SessionMessage): string {
  const who = m.role === 'tool' ? `TOOL(${m.toolName ?? '?'})` : m.role.toUpperCase();
  const calls = m.toolCalls?.length ? ` [called ${m.toolCalls.map((c) => c.name).join(', ')}]` : '';
  return `${who}: ${m.content}${calls}`;
}

/** The summary-compaction log lines (matched loosely; the exact wording has its own test). */
function compactedLog(bot: TestBot): Array<{ removed: number; kept: number }> {
  return bot.logs
    .lines()
    .map((l) => /Compacted with LLM summary: removed (\d+) messages, kept (\d+)$/.exec(String(l.msg)))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ removed: Number(m[1]), kept: Number(m[2]) }));
}

const fact = (i: number) => `Fact ${i}: pier ${i} has ${i * 3} lamps and ${i + 2} boats.`;

// ---------------------------------------------------------------------------------------------
// threshold, keep counts, what consolidation gets, what the user is told

// The daily-notes section is off here so the system prompt does not grow with each exchange and
// "just over" can be one small message after "exactly at".
const NO_NOTES = { memory: { enabled: false }, compaction: { maxContextTokens: LIMIT, keepLastMessages: 20 } };

test('compaction triggers above 80 % of the limit and not at or below it; consolidation gets exactly the removed messages; the user is told', () =>
  withBot({ runtimeConfig: NO_NOTES }, async ({ bot, invalid }) => {
    await bot.send(CHAT, 'hello');
    const usage = bot.app.parts.compactor.usage(session(bot));
    assert.ok(usage.limit === LIMIT);
    assert.equal(usage.reserved, usage.tokens, 'memory off: no budget is reserved for it');
    await fill(bot, Math.floor(LIMIT * 0.78), fact);
    assert.deepEqual(
      kinds(bot).filter((k) => k !== 'chat'),
      [],
      'no compaction while filling',
    );

    // Exactly 80 % (the padding words are one token each, so the target is hit exactly): nothing happens.
    let under = tune(bot, 'Almost there: one more fact about the harbour.', LIMIT * 0.8, 'under');
    for (const end of ['.', '!', ' ok', ' yes.', ' (really)', ' — fine', '?!']) {
      if (under.tokens === LIMIT * 0.8) break;
      under = tune(bot, `Almost there: one more fact about the harbour${end}`, LIMIT * 0.8, 'under');
    }
    assert.equal(under.tokens, LIMIT * 0.8, 'could not build a message landing exactly on 80 %');
    const before = session(bot).messages.length;
    const r1 = await bot.send(CHAT, under.text);
    assert.deepEqual(r1, ['ok'], 'no compaction notice below the threshold');
    assert.equal(count(bot, 'consolidation'), 0);
    assert.equal(count(bot, 'summary'), 0);
    assert.equal(session(bot).messages.length, before + 2);
    assert.equal(session(bot).metadata.lastCompaction, undefined);

    // Just over 80 %: compaction, keeping keepLastMessages (20).
    const over = tune(bot, 'Over.', LIMIT * 0.8, 'over');
    assert.ok(over.tokens > LIMIT * 0.8 && over.tokens <= LIMIT * 0.8 + 20, `over: ${over.tokens}`);
    assert.ok(over.tokens / LIMIT <= 0.9);
    const snapshot = [...session(bot).messages.map((m) => ({ ...m })), makeMessage('user', over.text)];
    const reqsBefore = bot.llm.chatRequests().length;
    const r2 = await bot.send(CHAT, over.text);

    const expectedRemoved = snapshot.slice(0, snapshot.length - 20);
    assert.ok(expectedRemoved.length > 0);
    assert.equal(r2.length, 1);
    assert.match(r2[0]!, /^ok\n\nℹ️ Compacted the conversation: (\d+) messages summarized, memory updated$/);
    assert.equal(Number(/(\d+) messages summarized/.exec(r2[0]!)![1]), expectedRemoved.length, 'the notice gives the number removed');

    // Order: consolidation, then summary, then the chat request.
    assert.deepEqual(kinds(bot).slice(reqsBefore), ['consolidation', 'summary', 'chat']);
    const consolidation = bot.llm
      .chatRequests()
      .slice(reqsBefore)
      .find((r) => promptKind(r) === 'consolidation')!;
    assert.deepEqual(consolidatedLines(consolidation), expectedRemoved.map(asLine), 'consolidation gets exactly the removed messages, in order');

    // The session: the summary first, then the kept 20 (the last being this message), then the answer.
    const s = session(bot);
    assert.equal(s.messages[0]!.role, 'system');
    assert.ok(s.messages[0]!.content.startsWith('[Conversation summary]\n'));
    assert.deepEqual(
      s.messages.slice(1, 21).map((m) => [m.role, m.content]),
      snapshot.slice(-20).map((m) => [m.role, m.content]),
    );
    assert.deepEqual([s.messages[21]!.role, s.messages[21]!.content], ['assistant', 'ok']);
    assert.equal(s.messages.length, 22);
    assert.deepEqual(
      s.metadata.lastCompaction && { kind: s.metadata.lastCompaction.kind, removed: s.metadata.lastCompaction.removed, kept: s.metadata.lastCompaction.kept },
      {
        kind: 'summary',
        removed: expectedRemoved.length,
        kept: 20,
      },
    );
    assert.equal(s.metadata.messagesCompacted, expectedRemoved.length);
    assert.deepEqual(compactedLog(bot), [{ removed: expectedRemoved.length, kept: 20 }]);

    // The request that followed was built from the compacted session.
    const chatReq = bot.llm.chatRequests().at(-1)!;
    assert.equal(promptKind(chatReq), 'chat');
    assert.equal(chatReq.body.messages[1].role, 'system');
    assert.ok(String(chatReq.body.messages[1].content).startsWith('[Conversation summary]'));
    assert.equal(chatReq.body.messages.at(-1).content, over.text);
    assert.equal(chatReq.body.messages.length, 1 + 1 + 20);

    // Memory and history hold what was consolidated.
    const memDir = path.join(bot.workspace, 'memory', SESSION_ID);
    assert.match(await readFile(path.join(memDir, 'MEMORY.md'), 'utf8'), new RegExp(`consolidated ${expectedRemoved.length} messages`));
    assert.match(
      await readFile(path.join(memDir, 'HISTORY.md'), 'utf8'),
      /^## \d{4}-\d{2}-\d{2}T.*\n\[2026-01-01 00:00\] Consolidated \d+ messages\. First: .*USER: hello/m,
    );
    assert.deepEqual(invalid, []);
  }));

test('log line is exactly "[AutoCompact] Compacted with LLM summary: removed N messages, kept M" (as in the seed)', () =>
  withBot({}, async ({ bot }) => {
    await bot.send(CHAT, 'hello');
    await fill(bot, Math.floor(LIMIT * 0.78), fact);
    const over = tune(bot, 'Over the line now.', Math.floor(LIMIT * 0.82), 'under');
    const before = session(bot).messages.length + 1;
    await bot.send(CHAT, over.text);
    const lines = bot.logs
      .lines()
      .map((l) => String(l.msg))
      .filter((m) => m.includes('Compacted with LLM summary'));
    assert.deepEqual(lines, [`[AutoCompact] Compacted with LLM summary: removed ${before - 20} messages, kept 20`]);
  }));

test('above 90 % it compacts harder: keeps half of keepLastMessages', () =>
  withBot({}, async ({ bot, invalid }) => {
    await bot.send(CHAT, 'hello');
    await fill(bot, Math.floor(LIMIT * 0.75), fact);
    assert.equal(count(bot, 'consolidation'), 0);
    const hard = tune(bot, 'A long message that pushes it far over.', Math.floor(LIMIT * 0.93), 'under');
    assert.ok(hard.tokens / LIMIT > 0.9 && hard.tokens < LIMIT, `hard: ${hard.tokens}`);
    const snapshot = [...session(bot).messages, makeMessage('user', hard.text)];
    const reply = await bot.send(CHAT, hard.text);
    assert.match(reply[0]!, /Compacted the conversation: (\d+) messages summarized/);
    const s = session(bot);
    assert.equal(s.metadata.lastCompaction?.kept, 10, 'half of keepLastMessages (20)');
    assert.equal(s.metadata.lastCompaction?.removed, snapshot.length - 10);
    assert.deepEqual(compactedLog(bot), [{ removed: snapshot.length - 10, kept: 10 }]);
    assert.deepEqual(
      s.messages.slice(1, 11).map((m) => m.content),
      snapshot.slice(-10).map((m) => m.content),
    );
    assert.equal(s.messages.length, 1 + 10 + 1);
    assert.deepEqual(invalid, []);
  }));

// The memory sections (# Memory, # Relevant Memory) share memory.budgetPercent of the limit and
// change size from turn to turn; the decision counts that whole budget, not what the last turn built.
const WIDE = 6000;

test('the decision counts the whole memory budget: compacts once the history passes what the budget leaves it, though the last prompt was far under 80 %', () =>
  withBot({ runtimeConfig: { compaction: { maxContextTokens: WIDE, keepLastMessages: 20 }, memory: { budgetPercent: 25 } } }, async ({ bot, invalid }) => {
    await bot.send(CHAT, 'hello');
    const first = bot.app.parts.compactor.usage(session(bot));
    // Nothing to remember yet: the prompt as built is instructions only; a quarter of the limit is the memory's.
    assert.ok(first.reserved - first.tokens > WIDE * 0.2, `reserved ${first.reserved}, as built ${first.tokens}`);
    await fill(bot, Math.floor(WIDE * 0.78), fact);
    assert.deepEqual(
      kinds(bot).filter((k) => k !== 'chat'),
      [],
      'no compaction while the history fits beside the budget',
    );

    const over = tune(bot, 'Over.', WIDE * 0.8, 'over');
    const asBuilt = (() => {
      const s = session(bot);
      s.messages.push(makeMessage('user', over.text));
      try {
        return bot.app.parts.compactor.usage(s).tokens;
      } finally {
        s.messages.pop();
      }
    })();
    assert.ok(asBuilt < WIDE * 0.7, `the request as the last prompt was built is ${asBuilt}, far under 80 %`);
    const [reply] = await bot.send(CHAT, over.text);
    assert.match(reply!, /Compacted the conversation: \d+ messages summarized/);
    assert.equal(session(bot).metadata.lastCompaction?.kept, 20);
    // The next request, memory sections included, is well under the threshold.
    const after = bot.app.parts.compactor.usage(session(bot));
    assert.ok(after.reserved < WIDE * 0.8, `after: ${after.reserved}`);
    assert.deepEqual(invalid, []);
  }));

test('a small context with a big memory share is not compacted on every turn: the budget is reserved only within half the limit', () =>
  withBot({ runtimeConfig: { compaction: { maxContextTokens: LIMIT, keepLastMessages: 20 }, memory: { budgetPercent: 50 } } }, async ({ bot }) => {
    // Tool definitions (~680) + instructions + half of 2,200 would be over 80 % with no conversation at all.
    for (let i = 0; i < 6; i++) assert.deepEqual(await bot.send(CHAT, fact(i)), ['ok']);
    assert.deepEqual(
      kinds(bot).filter((k) => k !== 'chat'),
      [],
    );
    const u = bot.app.parts.compactor.usage(session(bot));
    assert.ok(u.reserved >= u.tokens && u.reserved < LIMIT * 0.8, `reserved ${u.reserved}, as built ${u.tokens}`);
  }));

// ---------------------------------------------------------------------------------------------
// invariants

test('tool-call pairs straddling the cut survive compaction and the next request is valid', () => {
  const chat = (req: RecordedRequest) => {
    const msgs = req.body.messages;
    const last = msgs.at(-1);
    if (last.role === 'tool') return text('It is 12:00 in Berlin and 19:00 in Tokyo.');
    if (/what time/i.test(lastUserText(req))) {
      return toolCalls([
        { name: 'get_current_time', args: { timezone: 'Europe/Berlin' }, id: 'call_berlin' },
        { name: 'get_current_time', args: { timezone: 'Asia/Tokyo' }, id: 'call_tokyo' },
      ]);
    }
    return text('ok');
  };
  return withBot({ chat, runtimeConfig: { compaction: { maxContextTokens: LIMIT, keepLastMessages: 4 } } }, async ({ bot, invalid }) => {
    await bot.send(CHAT, 'hello');
    await fill(bot, Math.floor(LIMIT * 0.6), fact);
    const r = await bot.send(CHAT, 'What time is it in Berlin and Tokyo?');
    assert.deepEqual(r, ['It is 12:00 in Berlin and 19:00 in Tokyo.']);
    assert.equal(count(bot, 'consolidation'), 0, 'no compaction yet');
    // [..., user, assistant(tool_calls), tool, tool, assistant]; the next user message makes the
    // last 4 start at the first tool result: the cut straddles the tool group.
    const s0 = session(bot).messages;
    assert.deepEqual(
      s0.slice(-5).map((m) => m.role),
      ['user', 'assistant', 'tool', 'tool', 'assistant'],
    );

    const over = tune(bot, 'Thanks, and one more fact about the harbour.', Math.floor(LIMIT * 0.85), 'under');
    assert.ok(over.tokens > LIMIT * 0.8 && over.tokens <= LIMIT * 0.9, `over: ${over.tokens}`);
    const reqsBefore = bot.llm.chatRequests().length;
    const reply = await bot.send(CHAT, over.text);
    assert.match(reply[0]!, /^ok\n\nℹ️ Compacted the conversation/);

    const s = session(bot).messages;
    // Every tool result still follows the assistant message that called it.
    for (let i = 0; i < s.length; i++) {
      if (s[i]!.role !== 'tool') continue;
      let j = i - 1;
      while (j >= 0 && s[j]!.role === 'tool') j--;
      const caller = s[j];
      assert.ok(
        caller && caller.role === 'assistant' && caller.toolCalls?.some((c) => c.id === s[i]!.toolCallId),
        `tool result ${s[i]!.toolCallId} lost its call`,
      );
    }
    // And every call kept its result.
    for (const m of s)
      for (const c of m.toolCalls ?? [])
        assert.ok(
          s.some((t) => t.role === 'tool' && t.toolCallId === c.id),
          `call ${c.id} lost its result`,
        );
    assert.ok(
      s.some((m) => m.toolCalls?.some((c) => c.id === 'call_berlin')),
      'the tool group was kept (the tail grew backwards), not split',
    );

    // The consolidation got the user question but not the tool group that stayed.
    const consolidation = bot.llm
      .chatRequests()
      .slice(reqsBefore)
      .find((q) => promptKind(q) === 'consolidation')!;
    const lines = consolidatedLines(consolidation);
    assert.ok(lines.includes('USER: What time is it in Berlin and Tokyo?'));
    assert.ok(!lines.some((l) => l.startsWith('TOOL(')), 'tool results that stayed were not consolidated');

    // The next request was accepted, and has the structure the API wants.
    assert.deepEqual(invalid, []);
    const chatReq = bot.llm.chatRequests().at(-1)!;
    assert.equal(promptKind(chatReq), 'chat');
    assert.deepEqual(requestProblems(chatReq.body.messages), []);
    // (# Relevant Memory, just before the user message, may bring back summarized exchanges.)
    const roles = chatReq.body.messages.filter((m: any) => !String(m.content).startsWith('# Relevant Memory')).map((m: any) => m.role);
    assert.deepEqual(roles, ['system', 'system', 'assistant', 'tool', 'tool', 'assistant', 'user']);
    assert.deepEqual(
      chatReq.body.messages[2].tool_calls.map((c: any) => c.id),
      ['call_berlin', 'call_tokyo'],
    );
    assert.deepEqual(
      chatReq.body.messages.slice(3, 5).map((m: any) => m.tool_call_id),
      ['call_berlin', 'call_tokyo'],
    );

    // One more turn on the compacted session is accepted too. (At this tiny limit it may compact
    // again.)
    assert.match((await bot.send(CHAT, 'and now?'))[0]!, /^ok(\n\nℹ️ Compacted the conversation.*)?$/);
    assert.deepEqual(invalid, []);
  });
});

test('the summary prompt leaves tool results out and cuts each message to 300 characters', () => {
  const chat = (req: RecordedRequest) => {
    if (req.body.messages.at(-1).role === 'tool') return text('Done.');
    if (lastUserText(req).startsWith('Look up')) return toolCalls([{ name: 'get_current_time', args: {}, id: 'call_x' }]);
    return text('ok');
  };
  return withBot({ chat, runtimeConfig: { compaction: { maxContextTokens: LIMIT, keepLastMessages: 2 } } }, async ({ bot, invalid }) => {
    await bot.send(CHAT, 'Look up the time please.');
    await bot.send(CHAT, `Long story: ${'abcdefghij'.repeat(60)}`);
    await bot.send(CHAT, 'short one');
    const reply = await bot.send(CHAT, '/compact 2');
    assert.match(reply[0]!, /messages summarized/);
    const summary = bot.llm.chatRequests().find((r) => promptKind(r) === 'summary')!;
    const prompt = String(summary.body.messages[0].content);
    assert.ok(!prompt.includes('TOOL('), 'no tool results in the summary prompt');
    assert.ok(!prompt.includes('"timezone"'), 'no tool output in the summary prompt');
    assert.ok(prompt.includes('USER: Look up the time please.'));
    const long = prompt.split('\n').find((l) => l.includes('Long story:'))!;
    assert.equal(long.slice(long.indexOf('USER: ') + 6).length, 300, 'cut to 300 characters');
    assert.equal(summary.body.temperature, 0.3);
    assert.equal(summary.body.max_tokens, 500);
    assert.deepEqual(invalid, []);
  });
});

test('system messages other than the summary are never removed, and earlier summaries are folded in', () =>
  withBot({ runtimeConfig: { compaction: { maxContextTokens: LIMIT, keepLastMessages: 4 } } }, async ({ bot, invalid }) => {
    await bot.send(CHAT, 'hello');
    const s = session(bot);
    // A pinned instruction at the start and another one in the middle of the conversation.
    s.messages.unshift(makeMessage('system', 'Pinned: the user is called Zed and lives in Oslo.'));
    await bot.send(CHAT, fact(1));
    s.messages.push(makeMessage('system', 'Pinned: answers must be under 50 words.'));
    await bot.app.parts.sessions.save(s);
    await fill(bot, Math.floor(LIMIT * 0.78), fact);
    const over = tune(bot, 'Pushing over.', Math.floor(LIMIT * 0.85), 'under');
    assert.ok(over.tokens > LIMIT * 0.8);
    const r = await bot.send(CHAT, over.text);
    assert.match(r[0]!, /Compacted the conversation/);
    const systems1 = session(bot)
      .messages.filter((m) => m.role === 'system')
      .map((m) => m.content);
    assert.ok(systems1.includes('Pinned: the user is called Zed and lives in Oslo.'));
    assert.ok(systems1.includes('Pinned: answers must be under 50 words.'));
    assert.equal(systems1.filter((c) => c.startsWith('[Conversation summary]')).length, 1);
    // The pinned messages were not handed to consolidation as if they were leaving.
    const firstConsolidation = bot.llm.chatRequests().find((q) => promptKind(q) === 'consolidation')!;
    assert.ok(!consolidatedLines(firstConsolidation).some((l) => l.startsWith('SYSTEM:')));

    // A second compaction: pinned messages still there, still one summary, the old one folded in.
    await fill(bot, Math.floor(LIMIT * 0.78), (i) => fact(100 + i));
    const again = await bot.send(CHAT, '/compact 2');
    assert.match(again[0]!, /summarized/);
    const systems2 = session(bot)
      .messages.filter((m) => m.role === 'system')
      .map((m) => m.content);
    assert.ok(systems2.includes('Pinned: the user is called Zed and lives in Oslo.'));
    assert.ok(systems2.includes('Pinned: answers must be under 50 words.'));
    assert.equal(systems2.filter((c) => c.startsWith('[Conversation summary]')).length, 1);
    const summaries = bot.llm.chatRequests().filter((q) => promptKind(q) === 'summary');
    assert.ok(String(summaries.at(-1)!.body.messages[0].content).includes('Summary of what came before:'));
    assert.deepEqual(invalid, []);
  }));

// ---------------------------------------------------------------------------------------------
// truncation by importance when no summary can be had

test('summaries failing (500): truncation by importance keeps directives and error/correction pairs, drops casual exchanges first, whole exchanges, with a marker', () => {
  const other: Responder = (req, i) => (promptKind(req) === 'summary' ? { status: 500 } : memoryAwareResponder(req, i));
  const chat = (req: RecordedRequest) => (/^thanks$/.test(lastUserText(req)) ? text('ok') : text('Noted, I have written that down for you.'));
  return withBot(
    { chat, other, runtimeConfig: { memory: { enabled: false }, compaction: { maxContextTokens: LIMIT, keepLastMessages: 5 } } },
    async ({ bot, invalid }) => {
      const DIRECTIVE = 'From now on always answer in French.';
      const ERROR = 'The deploy script printed an error: TypeError: cannot read property host of undefined.';
      const CORRECTION = 'Actually, I meant the staging deploy, not production.';
      const ord = (i: number) => `Garden ${i}: ${i + 4} tulips and ${i + 7} roses grow by the fence.`;
      // directive, ordinary ×4, thanks, ordinary, error, correction, ordinary ×8, thanks, ordinary ×4, thanks, then ordinary.
      const script: string[] = [DIRECTIVE, ord(1), ord(2), ord(3), ord(4), 'thanks', ord(5), ERROR, CORRECTION];
      for (let i = 6; i <= 13; i++) script.push(ord(i));
      script.push('thanks');
      for (let i = 14; i <= 17; i++) script.push(ord(i));
      script.push('thanks');
      for (const t of script) {
        if (bot.app.parts.sessions.get(SESSION_ID)) assert.ok(predict(bot, t) <= LIMIT * 0.8, 'no compaction while building up');
        await bot.send(CHAT, t);
      }
      s0pin(bot);
      await fill(bot, Math.floor(LIMIT * 0.79), (i) => ord(18 + i));
      assert.equal(count(bot, 'consolidation'), 0);
      const over = tune(bot, 'Garden finale: tulips and roses everywhere.', Math.floor(LIMIT * 0.82), 'under');
      assert.ok(over.tokens > LIMIT * 0.8 && over.tokens <= LIMIT * 0.9, `over: ${over.tokens}`);
      const before = [...session(bot).messages];
      const reply = await bot.send(CHAT, over.text);
      assert.equal(reply.length, 1);
      assert.match(
        reply[0]!,
        /^Noted, I have written that down for you\.\n\nℹ️ Compacted the conversation: (\d+) older messages removed \(a summary was not available; they are kept in the history log\)$/,
      );
      const removedN = Number(/: (\d+) older messages removed/.exec(reply[0]!)![1]);

      const after = session(bot).messages;
      const has = (content: string) => after.some((m) => m.content === content);
      // Protected: the directive, the error and its correction — each with its answer.
      assert.ok(has(DIRECTIVE), 'the directive survived');
      assert.ok(has(ERROR), 'the error survived');
      assert.ok(has(CORRECTION), 'the correction survived');
      // Casual exchanges go first: every "thanks" is gone, while ordinary exchanges older than
      // the last "thanks" are still there.
      assert.equal(after.filter((m) => m.content === 'thanks').length, 0, 'casual exchanges were dropped');
      const keptOrdinary = after.filter((m) => m.role === 'user' && /^Garden (\d+):/.test(m.content)).map((m) => Number(/^Garden (\d+):/.exec(m.content)![1]));
      assert.ok(
        keptOrdinary.some((n) => n <= 17),
        `an ordinary exchange older than the last "thanks" should have outlived it; kept: ${keptOrdinary.join(',')}`,
      );
      const droppedOrdinary = before.filter((m) => m.role === 'user' && /^Garden \d+:/.test(m.content) && !has(m.content));
      assert.ok(droppedOrdinary.length > 0, 'some ordinary exchanges had to go too');
      // Oldest ordinary exchanges go before newer ones.
      const droppedNums = droppedOrdinary.map((m) => Number(/^Garden (\d+):/.exec(m.content)![1]));
      assert.ok(Math.max(...droppedNums) < Math.min(...keptOrdinary), `dropped ${droppedNums.join(',')} vs kept ${keptOrdinary.join(',')}`);
      // User + assistant of one exchange are dropped together.
      for (let i = 0; i < before.length; i++) {
        const m = before[i]!;
        if (m.role !== 'user') continue;
        const answer = before[i + 1];
        if (answer?.role !== 'assistant') continue;
        const userKept = after.some((x) => x.id === m.id);
        const answerKept = after.some((x) => x.id === answer.id);
        assert.equal(userKept, answerKept, `exchange "${m.content.slice(0, 30)}" was split`);
      }
      // The marker says how many were removed; the pinned system message is still there.
      const markers = after.filter((m) => m.role === 'system' && /^\[\d+ earlier messages removed — kept in memory\]$/.test(m.content));
      assert.equal(markers.length, 1);
      const removed = before.length + 2 - (after.length - 1); // +user +answer, −marker
      assert.equal(markers[0]!.content, `[${removed} earlier messages removed — kept in memory]`);
      assert.equal(removedN, removed);
      assert.ok(after.some((m) => m.role === 'system' && m.content === PIN));
      assert.equal(session(bot).metadata.lastCompaction?.kind, 'truncation');
      // The truncated session is still a valid request.
      assert.deepEqual(invalid, []);
      assert.deepEqual(await bot.send(CHAT, 'thanks'), ['ok']);
      assert.deepEqual(invalid, []);
    },
  );
});

test('truncation: consolidation runs first on the old messages; survivors are flagged and never consolidated twice', () => {
  const other: Responder = (req, i) => (promptKind(req) === 'summary' ? { status: 500 } : memoryAwareResponder(req, i));
  const chat = () => text('Noted, I have written that down for you.');
  return withBot(
    { chat, other, runtimeConfig: { memory: { enabled: false }, compaction: { maxContextTokens: LIMIT, keepLastMessages: 5 } } },
    async ({ bot }) => {
      await bot.send(CHAT, 'From now on always answer in French.');
      await fill(bot, Math.floor(LIMIT * 0.79), (i) => `Garden ${i}: ${i + 4} tulips and ${i + 7} roses grow by the fence.`);
      const over = tune(bot, 'Garden finale.', Math.floor(LIMIT * 0.82), 'under');
      assert.ok(over.tokens > LIMIT * 0.8);
      const before = [...session(bot).messages];
      const from = bot.llm.chatRequests().length;
      await bot.send(CHAT, over.text);
      const after = session(bot).messages;
      assert.equal(session(bot).metadata.lastCompaction?.kind, 'truncation');
      const left = before.filter((m) => !after.some((x) => x.id === m.id));
      assert.ok(left.length > 0 && left.length < before.length - 5, 'some, not all, old messages were dropped');
      const consolidation = bot.llm
        .chatRequests()
        .slice(from)
        .find((r) => promptKind(r) === 'consolidation')!;
      const lines = consolidatedLines(consolidation);
      for (const m of left) assert.ok(lines.includes(asLine(m)), `dropped message not consolidated: ${m.content.slice(0, 40)}`);
      // Old messages that survived the truncation were consolidated too, and are flagged so the
      // next compaction does not send them again.
      // User lines are unique here (the assistant always answers the same words), so they identify old messages.
      const survivors = after.filter((m) => m.role === 'user' && before.some((b) => b.id === m.id) && lines.includes(asLine(m)));
      assert.ok(survivors.length > 0, 'some old messages survived');
      assert.ok(survivors.every((m) => m.consolidated === true));
      const from2 = bot.llm.chatRequests().length;
      await bot.send(CHAT, '/compact 2');
      const second = bot.llm
        .chatRequests()
        .slice(from2)
        .find((r) => promptKind(r) === 'consolidation');
      const again = second ? consolidatedLines(second) : [];
      for (const m of survivors) assert.ok(!again.includes(asLine(m)), `consolidated twice: ${m.content.slice(0, 40)}`);
    },
  );
});

const PIN = 'Pinned: the user is called Zed.';
function s0pin(bot: TestBot): void {
  session(bot).messages.unshift(makeMessage('system', PIN));
}

test('bounded time: with consolidation and summary hanging, a turn that needs compaction still gets its answer', () => {
  const other: Responder = () => ({ hang: true });
  return withBot(
    {
      other,
      env: { CONSOLIDATION_TIMEOUT_MS: '300', COMPACTION_TIMEOUT_MS: '300' },
      runtimeConfig: { compaction: { maxContextTokens: LIMIT, keepLastMessages: 6 } },
    },
    async ({ bot, invalid }) => {
      await bot.send(CHAT, 'hello');
      await fill(bot, Math.floor(LIMIT * 0.78), fact);
      const over = tune(bot, 'Does this still get an answer?', Math.floor(LIMIT * 0.85), 'under');
      assert.ok(over.tokens > LIMIT * 0.8);
      const reply = await bot.send(CHAT, over.text);
      assert.equal(reply.length, 1);
      assert.match(reply[0]!, /^ok\n\nℹ️ Compacted the conversation: \d+ older messages removed/);
      assert.equal(count(bot, 'consolidation'), 1);
      assert.equal(count(bot, 'summary'), 1);
      const history = await readFile(path.join(bot.workspace, 'memory', SESSION_ID, 'HISTORY.md'), 'utf8');
      assert.match(history, /\[raw-fallback\]/);
      assert.match(history, /Fact \d+: pier/);
      assert.equal(session(bot).metadata.lastCompaction?.kind, 'truncation');
      assert.deepEqual(invalid, []);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// the provider says "context length exceeded"

const TOO_LONG: FakeReply = {
  status: 400,
  json: { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', code: 'context_length_exceeded' } },
};

test('provider says context length exceeded once: one compaction, one retry, the user gets the answer', () => {
  let failNext = false;
  const chat = (req: RecordedRequest) => {
    if (failNext) {
      failNext = false;
      return TOO_LONG;
    }
    return text(`echo: ${lastUserText(req)}`);
  };
  return withBot({ chat }, async ({ bot, invalid }) => {
    for (let i = 0; i < 6; i++) await bot.send(CHAT, fact(i));
    const from = bot.llm.chatRequests().length;
    failNext = true;
    const reply = await bot.send(CHAT, 'What did I tell you about pier 3?');
    assert.equal(reply.length, 1);
    assert.match(reply[0]!, /^echo: What did I tell you about pier 3\?\n\nℹ️ Compacted the conversation: \d+ messages summarized/);
    assert.deepEqual(kinds(bot).slice(from), ['chat', 'consolidation', 'summary', 'chat']);
    assert.equal(compactedLog(bot).length, 1, 'exactly one compaction');
    const s = session(bot);
    assert.equal(s.metadata.lastCompaction?.kind, 'summary');
    assert.ok(s.messages[0]!.content.startsWith('[Conversation summary]'));
    const [first, second] = bot.llm
      .chatRequests()
      .slice(from)
      .filter((r) => promptKind(r) === 'chat');
    assert.ok(second!.body.messages.length < first!.body.messages.length, 'the retry is smaller');
    assert.equal(second!.body.messages.at(-1).content, 'What did I tell you about pier 3?');
    assert.deepEqual(invalid, []);
  });
});

test('provider says context length exceeded every time: one clear reply mentioning /compact or /new, two chat requests, no loop', () =>
  withBot({}, async ({ bot }) => {
    for (let i = 0; i < 6; i++) await bot.send(CHAT, fact(i));
    bot.llm.setResponder(strict(() => TOO_LONG, []));
    const from = bot.llm.chatRequests().length;
    const reply = await bot.send(CHAT, 'Still there?');
    assert.equal(reply.length, 1, `one reply: ${JSON.stringify(reply)}`);
    assert.match(reply[0]!, /\/compact|\/new/);
    assert.match(reply[0]!, /too long/i);
    assert.equal(count(bot, 'chat', from), 2, 'the chat request is retried exactly once');
    // The user's message is still in the session, and the bot still works afterwards.
    assert.ok(session(bot).messages.some((m) => m.content === 'Still there?'));
    bot.llm.setResponder(strict(() => text('back'), []));
    assert.deepEqual(await bot.send(CHAT, 'hello again'), ['back']);
  }));
