/**
 * The MCP servers of MCP_CONFIG, as one source of tools for the registry (tools/types.ts,
 * ToolSource). A chat is offered the tools of the connected servers it may use: every server
 * in a private chat; in a group chat only servers whose `groups` is true or lists the group
 * (a forum topic counts as its group). A request holds MAX_FUNCTIONS functions at most, the
 * bot's own first: the servers' tools fill the rest in the file's order, and what does not fit
 * is left out (logged, and named in /status). Also the lines /status shows, and the stop.
 */
import { MAX_FUNCTIONS, type McpConfig, type McpServerConfig } from '../config/mcp.js';
import type { Logger } from '../core/log.js';
import type { Tool, ToolChat, ToolSource } from '../tools/types.js';
import { MAX_LOGGED_NAMES, McpConnection, type Backoff } from './connection.js';
import { someNames } from './tools.js';
import { splitTopic } from '../core/group.js';

export interface McpServersDeps {
  log: Logger;
  /** TOOL_TIMEOUT_MS: a server's deadline when it sets no `timeoutMs`. */
  toolTimeoutMs: number;
  /** How many tools of the bot's own a request sends before any server's (asked when a request is sized: they are installed after the servers are built). */
  ownTools?: (() => number) | undefined;
  backoff?: Backoff | undefined;
}

/** What a request has room for, per server: the tools taken and the names that did not fit. */
interface Taken {
  tools: Tool[];
  /** Server name → its tools (function names) left out for want of room. */
  cut: Map<string, string[]>;
}

/** Different left-out sets logged at most (each once): groups may differ from private chats. */
const MAX_LOGGED_CUTS = 50;

export class McpServers implements ToolSource {
  readonly connections: McpConnection[];
  private readonly loggedCuts = new Set<string>();

  constructor(
    config: McpConfig,
    private readonly deps: McpServersDeps,
  ) {
    this.connections = config.servers.map((server) => new McpConnection(server, deps));
  }

  /** Functions left for the servers' tools in one request. */
  get room(): number {
    return Math.max(0, MAX_FUNCTIONS - (this.deps.ownTools?.() ?? 0));
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
    const { tools, cut } = this.take(chat);
    if (cut.size > 0) this.logCut(cut);
    return tools;
  }

  /** A tool `chat` may call: also one of a server that is down (its call says so), not one left out for want of room. */
  find(name: string, chat: ToolChat): Tool | undefined {
    const cut = this.take(chat).cut;
    for (const c of this.connections) {
      if (!allowedIn(c.server, chat) || cut.get(c.server.name)?.includes(name)) continue;
      const tool = c.find(name);
      if (tool) return tool;
    }
    return undefined;
  }

  /** The tools offered to `chat` (no chat: every server's), in the file's order, as many as a request has room for. */
  private take(chat?: ToolChat): Taken {
    let room = this.room;
    const tools: Tool[] = [];
    const cut = new Map<string, string[]>();
    for (const c of this.connections) {
      if (chat && !allowedIn(c.server, chat)) continue;
      const offered = c.offered();
      const fit = offered.slice(0, room);
      room -= fit.length;
      tools.push(...fit);
      if (fit.length < offered.length)
        cut.set(
          c.server.name,
          offered.slice(fit.length).map((t) => t.name),
        );
    }
    return { tools, cut };
  }

  private logCut(cut: Map<string, string[]>): void {
    const key = [...cut].map(([server, names]) => `${server}:${names.join(',')}`).join(';');
    if (this.loggedCuts.has(key) || this.loggedCuts.size >= MAX_LOGGED_CUTS) return;
    this.loggedCuts.add(key);
    const leftOut = Object.fromEntries([...cut].map(([server, names]) => [server, names.slice(0, MAX_LOGGED_NAMES)]));
    this.deps.log.warn(
      { leftOut, room: this.room, maxFunctions: MAX_FUNCTIONS },
      `MCP tools left out: a request holds ${MAX_FUNCTIONS} functions at most, the bot's own first`,
    );
  }

  /** For /status: one line per server, saying what a private chat (which may use every server) does not get. */
  statusLines(now = Date.now()): string[] {
    const { cut } = this.take();
    const cutNote = (server: string) => {
      const names = cut.get(server);
      // Without the `<server>__` every name of this line starts with.
      const own = names?.map((n) => n.slice(server.length + 2));
      return own ? `; ${own.length} of them not offered, a request holds ${MAX_FUNCTIONS} functions at most (${someNames(own)})` : '';
    };
    return [
      `MCP servers: ${this.connections.length}`,
      ...this.connections.map((c) => `  ${c.server.name} (${c.server.transport.kind}): ${c.describe(now)}${cutNote(c.server.name)}${groupsNote(c.server)}`),
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
