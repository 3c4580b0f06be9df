/**
 * The tool loop: ask the model, run the tools it calls, hand back their results, repeat until
 * it answers in words. After `maxIterations` rounds of tools the model is asked once more with
 * tools switched off, so a turn always ends with an answer and a bounded number of calls.
 * Every assistant and tool message is saved to the session as it happens.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { LlmClient } from './client.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { SessionStore } from '../sessions/store.js';
import { makeMessage } from '../sessions/model.js';
import type { Turn } from '../pipeline/turn.js';
import { buildRequestMessages, toApiMessage } from './messages.js';
import { componentLogger } from '../log.js';

export interface ToolLoopDeps {
  llm: LlmClient;
  tools: ToolRegistry;
  sessions: SessionStore;
  maxIterations: number;
}

export const EMPTY_ANSWER = 'The model returned an empty answer. Please rephrase or try again.';

export async function runToolLoop(deps: ToolLoopDeps, turn: Turn): Promise<void> {
  const log = componentLogger(turn.log, 'ToolLoop');
  const messages: ChatCompletionMessageParam[] = buildRequestMessages(turn.systemPrompt, turn.session.messages);
  const tools = deps.tools.definitions();
  for (let round = 1; ; round++) {
    const toolsAllowed = round <= deps.maxIterations;
    const res = await deps.llm.chat({
      messages,
      tools,
      toolChoice: toolsAllowed ? 'auto' : 'none',
      log,
    });
    turn.usage.llmCalls++;
    if (res.usage) {
      turn.usage.promptTokens += res.usage.promptTokens;
      turn.usage.completionTokens += res.usage.completionTokens;
    }
    if (res.toolCalls.length > 0 && toolsAllowed) {
      const assistant = makeMessage('assistant', res.content, { toolCalls: res.toolCalls });
      turn.session.messages.push(assistant);
      messages.push(toApiMessage(assistant));
      for (const call of res.toolCalls) {
        const outcome = await deps.tools.execute(call, turn);
        turn.usage.toolCalls++;
        log.info({ tool: call.name, ok: outcome.ok, code: outcome.code, ms: Math.round(outcome.durationMs) }, `tool ${call.name} ${outcome.ok ? 'ok' : 'error'}`);
        const result = makeMessage('tool', outcome.content, { toolCallId: call.id, toolName: call.name });
        turn.session.messages.push(result);
        messages.push(toApiMessage(result));
      }
      await deps.sessions.save(turn.session);
      continue;
    }
    if (res.toolCalls.length > 0) {
      log.warn({ rounds: round - 1 }, `model still asked for tools after ${deps.maxIterations} rounds; answering without them`);
    }
    const text = res.content.trim() ? res.content : EMPTY_ANSWER;
    await deps.sessions.append(turn.session, makeMessage('assistant', text));
    turn.response = text;
    return;
  }
}
