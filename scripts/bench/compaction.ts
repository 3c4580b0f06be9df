/** Deciding and applying a compaction of a 5,000-message session, the LLM stubbed to answer instantly. */
import { createApp } from '../../src/app/app.js';
import { silentLogger } from '../../src/core/log.js';
import { makeMessage } from '../../src/sessions/model.js';
import { startFakeLlm, memoryAwareResponder } from '../../test/helpers/fake-llm.js';
import { tempDir, testConfig } from '../../test/helpers/workspace.js';
import { rng, userText, assistantText } from './text.js';

export async function benchCompaction(): Promise<Record<string, string>> {
  const llm = await startFakeLlm(memoryAwareResponder);
  const ws = await tempDir('membot-bench-');
  const app = await createApp(testConfig({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir }), silentLogger());
  try {
    const r = rng(2);
    const times: number[] = [];
    const decide: number[] = [];
    for (let run = 0; run < 5; run++) {
      const session = await app.parts.sessions.getOrCreate('bench', `c${run}`);
      session.messages = Array.from({ length: 5000 }, (_, i) => makeMessage(i % 2 ? 'assistant' : 'user', `${i} ${i % 2 ? assistantText(r) : userText(r)}`));
      const t0 = performance.now();
      const usage = app.parts.compactor.usage(session);
      decide.push(performance.now() - t0);
      if (usage.ratio <= 0.8) throw new Error('expected the session to be over the threshold');
      const res = await app.parts.compactor.compactNow(app.parts.sessions.writer(session), 20);
      times.push(performance.now() - t0);
      if (res.kind !== 'summary' || session.messages.length !== 21) throw new Error(`unexpected compaction ${res.kind}`);
    }
    times.sort((a, b) => a - b);
    decide.sort((a, b) => a - b);
    return {
      'decide (count 5,000 messages vs limit), median of 5': `${decide[2]!.toFixed(1)} ms`,
      'decide + consolidate + summarize + apply + save, 5,000 messages, median of 5': `${times[2]!.toFixed(0)} ms (min ${times[0]!.toFixed(0)}, max ${times[4]!.toFixed(0)})`,
    };
  } finally {
    await app.stop();
    await llm.close();
    await ws.cleanup();
  }
}
