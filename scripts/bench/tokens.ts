/** Token counting: uncached throughput, cached re-count of a 1,000-message session. */
import { createTokenCounter } from '../../src/llm/tokens.js';
import { buildRequestMessages } from '../../src/llm/messages.js';
import { makeMessage } from '../../src/sessions/model.js';
import { rng, userText, assistantText } from './text.js';

export async function benchTokens(): Promise<Record<string, string>> {
  const counter = await createTokenCounter('o200k_base');
  const r = rng(1);
  const texts = Array.from({ length: 20_000 }, (_, i) => `${i}: ${i % 2 ? assistantText(r) : userText(r)}`);
  let tokens = 0;
  const t0 = performance.now();
  for (const t of texts) tokens += counter.countText(t);
  const uncachedMs = performance.now() - t0;

  const session = Array.from({ length: 1000 }, (_, i) => makeMessage(i % 2 ? 'assistant' : 'user', `${i} ${i % 2 ? assistantText(r) : userText(r)}`));
  const first = counter.countMessages(buildRequestMessages('You are helpful.', session));
  const runs: number[] = [];
  let again = 0;
  for (let i = 0; i < 200; i++) {
    const s = performance.now();
    again = counter.countMessages(buildRequestMessages('You are helpful.', session));
    runs.push(performance.now() - s);
  }
  if (again !== first) throw new Error('cached count differs');
  runs.sort((a, b) => a - b);
  return {
    'tokens counted per second (uncached, o200k_base)': `${Math.round(tokens / (uncachedMs / 1000)).toLocaleString('en-US')} (${texts.length.toLocaleString('en-US')} messages, ${tokens.toLocaleString('en-US')} tokens in ${uncachedMs.toFixed(0)} ms)`,
    're-count of a cached 1,000-message session (build request + count), median': `${runs[100]!.toFixed(3)} ms (p95 ${runs[190]!.toFixed(3)} ms; ${first.toLocaleString('en-US')} tokens)`,
  };
}
