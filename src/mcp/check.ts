/**
 * `npm run doctor`'s look at each MCP server: open a session (start the program or reach the
 * URL), list its tools, close — each request within the doctor's deadline — and say in one line what
 * to do when it fails.
 */
import type { McpConfig, McpServerConfig } from '../config/mcp.js';
import { isAppError } from '../core/errors.js';
import { scrubSecrets, silentLogger } from '../core/log.js';
import { openSession } from './client.js';
import { buildTools, someNames } from './tools.js';

export interface McpCheck {
  name: string;
  status: 'ok' | 'fail';
  detail: string;
  fix?: string | undefined;
}

export async function checkMcpServers(config: McpConfig, timeoutMs: number): Promise<McpCheck[]> {
  return Promise.all(config.servers.map((s) => checkServer(s, timeoutMs)));
}

async function checkServer(server: McpServerConfig, timeoutMs: number): Promise<McpCheck> {
  const name = `MCP ${server.name}`;
  const t = server.transport;
  const where = t.kind === 'stdio' ? `stdio ${[t.command, ...t.args].join(' ')}` : t.url;
  try {
    const session = await openSession(server, { timeoutMs, log: silentLogger() });
    await session.close();
    const { tools, skipped, overMax } = buildTools(server.name, session.tools, { allowed: server.tools, maxTools: server.maxTools }, async () => '');
    const missing = (server.tools ?? []).filter((n) => !session.tools.some((l) => l.name === n));
    const names = tools.map((x) => x.name.slice(server.name.length + 2));
    const notes = [
      ...(missing.length ? [`allowed but not offered: ${missing.join(', ')}`] : []),
      ...skipped.map((s) => `${s.tool} left out: ${s.why}`),
      ...(overMax.length
        ? [`${overMax.length} more left out, past its maxTools ${server.maxTools} (${someNames(overMax)}) — pick the ones wanted with "tools"`]
        : []),
    ];
    return {
      name,
      status: 'ok',
      detail: scrubSecrets(`${where}: ${tools.length} tool(s)${names.length ? ` (${names.join(', ')})` : ''}${notes.length ? `; ${notes.join('; ')}` : ''}`),
    };
  } catch (err) {
    const detail = scrubSecrets(`${where}: ${(err as Error).message}`);
    let fix: string;
    if (isAppError(err, 'mcp.rejected'))
      fix = `the server refused — check ${t.kind === 'http' ? 'its url path and headers (a token?)' : 'its args and env'} in MCP_CONFIG`;
    else if (isAppError(err, 'mcp.timeout')) fix = `no answer within ${timeoutMs} ms — check that the server starts and answers (run it in a shell)`;
    else
      fix =
        t.kind === 'stdio'
          ? `check that "${t.command}" starts from the daemon's folder (run it in a shell), and its args and env`
          : `check that the server at ${t.url} is running`;
    return { name, status: 'fail', detail, fix };
  }
}
