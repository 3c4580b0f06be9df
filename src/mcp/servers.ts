/**
 * The MCP servers of MCP_CONFIG, as one source of tools for the registry (tools/types.ts,
 * ToolSource). A chat is offered the tools of the connected servers it may use: every server
 * in a private chat; in a group chat only servers whose `groups` is true or lists the group
 * (a forum topic counts as its group). Also the lines /status shows, and the stop.
 */
import type { McpConfig, McpServerConfig } from '../config/mcp.js';
import type { Logger } from '../core/log.js';
import type { Tool, ToolChat, ToolSource } from '../tools/types.js';
import { McpConnection, type Backoff } from './connection.js';
import { splitTopic } from '../core/group.js';

export interface McpServersDeps {
  log: Logger;
  /** TOOL_TIMEOUT_MS: a server's deadline when it sets no `timeoutMs`. */
  toolTimeoutMs: number;
  backoff?: Backoff | undefined;
}

export class McpServers implements ToolSource {
  readonly connections: McpConnection[];

  constructor(config: McpConfig, deps: McpServersDeps) {
    this.connections = config.servers.map((server) => new McpConnection(server, deps));
  }

  /** Connects every server in the background; the daemon does not wait for them. */
  start(): void {
    for (const c of this.connections) c.start();
  }

  /** Ends every session; stdio servers' processes are ended and waited for. */
  async stop(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.stop()));
  }

  get(name: string): McpConnection | undefined {
    return this.connections.find((c) => c.server.name === name);
  }

  list(chat?: ToolChat): Tool[] {
    return this.connections.filter((c) => !chat || allowedIn(c.server, chat)).flatMap((c) => c.offered());
  }

  find(name: string, chat: ToolChat): Tool | undefined {
    for (const c of this.connections) {
      const tool = allowedIn(c.server, chat) ? c.find(name) : undefined;
      if (tool) return tool;
    }
    return undefined;
  }

  /** For /status: one line per server. */
  statusLines(now = Date.now()): string[] {
    return [
      `MCP servers: ${this.connections.length}`,
      ...this.connections.map((c) => `  ${c.server.name} (${c.server.transport.kind}): ${c.describe(now)}${groupsNote(c.server)}`),
    ];
  }
}

/** Whether `chat` may use `server`'s tools. */
export function allowedIn(server: McpServerConfig, chat: ToolChat): boolean {
  if (!chat.group) return true;
  if (typeof server.groups === 'boolean') return server.groups;
  // A forum topic is its group's (core/group.ts reads the id).
  return server.groups.includes(splitTopic(chat.chatId).chatId);
}

function groupsNote(server: McpServerConfig): string {
  if (server.groups === true) return ' · in groups too';
  if (server.groups === false) return ' · private chats only';
  return ` · in ${server.groups.length} listed group${server.groups.length === 1 ? '' : 's'} too`;
}
