/**
 * A test bot with MCP servers (MCP_CONFIG written to a temp file), and a fake model that calls
 * their tools on request: "call <tool> <json>" calls it, a question about the weather calls
 * fx__forecast, and once results are back it answers "The tool answered: …" with what they said.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from './app.js';
import { lastUserText, text, toolCalls, type RecordedRequest, type Responder } from './fake-llm.js';
import { tempDir } from './workspace.js';

/** An MCP result's text without the lines that open and close it (mcp/output.ts). */
export const withoutMarks = (r: string): string => r.replace(/^\[Output of tool [^\n]*\n/m, '').replace(/\n\[End of output of "[^"\n]*"\]$/, '');

/** The tool results at the end of a request. */
export function toolResults(req: RecordedRequest): string[] {
  const msgs = req.body.messages as Array<{ role: string; content: string }>;
  const out: string[] = [];
  for (let i = msgs.length - 1; i >= 0 && msgs[i]!.role === 'tool'; i--) out.unshift(msgs[i]!.content);
  return out;
}

export const callingModel: Responder = (req) => {
  const results = toolResults(req);
  if (results.length > 0) return text(`The tool answered: ${results.map(withoutMarks).join(' | ')}`);
  const user = lastUserText(req);
  const m = /^call (\S+)(?: (.+))?$/s.exec(user);
  if (m) return toolCalls([{ name: m[1]!, args: m[2] ? JSON.parse(m[2]) : {} }]);
  if (/weather/i.test(user)) return toolCalls([{ name: 'fx__forecast', args: { city: 'Oslo' } }]);
  return text('No tool needed.');
};

/** A bot whose MCP_CONFIG holds `servers`; `close` ends it and removes the file. */
export async function startMcpBot(
  servers: Record<string, unknown>,
  opts: { responder?: Responder; env?: Record<string, string> } = {},
): Promise<{ bot: TestBot; close: () => Promise<void> }> {
  const dir = await tempDir('membot-mcp-');
  const file = path.join(dir.dir, 'mcp.json');
  await writeFile(file, JSON.stringify({ servers }));
  const bot = await startTestBot({ ...(opts.responder ? { responder: opts.responder } : {}), env: { MCP_CONFIG: file, ...opts.env } });
  let closed = false;
  return {
    bot,
    close: async () => {
      if (closed) return;
      closed = true;
      await bot.close();
      await dir.cleanup();
    },
  };
}
