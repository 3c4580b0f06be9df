/**
 * The tool loop: ask the model, run the tools it calls, hand back their results, repeat until
 * it answers in words. After `maxIterations` rounds of tools the model is asked once more with
 * tools switched off, so a turn always ends with an answer and a bounded number of calls.
 * Every round's assistant and tool messages are made durable (session log) as it ends.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { isContextLengthError } from './errors.js';
import type { LlmClient } from './client.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { SessionStore } from '../sessions/store.js';
import { makeMessage } from '../sessions/model.js';
import type { Turn } from '../pipeline/turn.js';
import { buildRequestMessages, toApiMessage } from './messages.js';
import { componentLogger } from '../log.js';

/** Keeps requests within the context limit (see memory/auto-compact.ts). */
export interface ContextGuard {
  /** Compacts when the exact request is over the limit; true when the session changed. */
  fit(turn: Turn, messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[]): Promise<boolean>;
  /** The provider said "too long": compact harder (once per turn). */
  shrink(turn: Turn, reason: 'overflow'): Promise<unknown>;
}

export interface ToolLoopDeps {
  llm: LlmClient;
  tools: ToolRegistry;
  sessions: SessionStore;
  maxIterations: number;
  guard?: ContextGuard | undefined;
}

export const EMPTY_ANSWER = 'The model returned an empty answer. Please rephrase or try again.';

/** Past the turn's deadline nothing more is asked, run or saved: the user already has an apology. */
function checkDeadline(turn: Turn): void {
  if (turn.signal.aborted) throw turn.signal.reason;
}

export async function runToolLoop(deps: ToolLoopDeps, turn: Turn): Promise<void> {
  const log = componentLogger(turn.log, 'ToolLoop');
  const build = () => buildRequestMessages(turn.systemPrompt, turn.session.messages, { content: turn.turnPrompt, before: turn.userMessage });
  let messages: ChatCompletionMessageParam[] = build();
  const tools = deps.tools.definitions();
  let shrunk = false;
  for (let round = 1; ; round++) {
    const toolsAllowed = round <= deps.maxIterations;
    if (deps.guard && (await deps.guard.fit(turn, messages, tools))) messages = build();
    checkDeadline(turn);
    let res;
    try {
      res = await deps.llm.chat({ messages, tools, toolChoice: toolsAllowed ? 'auto' : 'none', log, account: { chat: turn.session.id, kind: 'answer' }, signal: turn.signal });
    } catch (err) {
      checkDeadline(turn);
      // Our count said it fits but the provider disagrees: compact harder and retry once.
      if (!deps.guard || shrunk || !isContextLengthError(err)) throw err;
      shrunk = true;
      log.warn('provider says the context is too long; compacting harder and retrying once');
      await deps.guard.shrink(turn, 'overflow');
      messages = build();
      round--;
      continue;
    }
    checkDeadline(turn);
    turn.usage.llmCalls++;
    if (res.usage) {
      turn.usage.promptTokens += res.usage.promptTokens;
      turn.usage.completionTokens += res.usage.completionTokens;
    }
    if (res.toolCalls.length > 0 && toolsAllowed) {
      const assistant = makeMessage('assistant', res.content, { toolCalls: res.toolCalls });
      deps.sessions.record(turn.session, assistant);
      messages.push(toApiMessage(assistant));
      for (const call of res.toolCalls) {
        const outcome = await deps.tools.execute(call, turn);
        checkDeadline(turn);
        turn.usage.toolCalls++;
        log.info({ tool: call.name, ok: outcome.ok, code: outcome.code, ms: Math.round(outcome.durationMs) }, `tool ${call.name} ${outcome.ok ? 'ok' : 'error'}`);
        const result = makeMessage('tool', outcome.content, { toolCallId: call.id, toolName: call.name });
        deps.sessions.record(turn.session, result);
        messages.push(toApiMessage(result));
      }
      await deps.sessions.commitRecorded(turn.session);
      continue;
    }
    if (res.toolCalls.length > 0) {
      log.warn({ rounds: round - 1 }, `model still asked for tools after ${deps.maxIterations} rounds; answering without them`);
    }
    const text = res.content.trim() ? res.content : EMPTY_ANSWER;
    // Set before the write: from here on the answer is on its way and the deadline leaves it be.
    turn.response = text;
    await deps.sessions.append(turn.session, makeMessage('assistant', text));
    return;
  }
}
