/**
 * An MCP server's tool list, turned into `Tool`s the registry offers the model. Names are
 * `<server>__<tool>` in the characters a function name may hold (64 at most); the description
 * and input schema come from the server, which is outside the bot: the description is cut and
 * cleaned of control characters, and a tool whose schema is not an object schema, or too big
 * to send with every request, or listed twice, is left out (and logged); so are those past the
 * server's `maxTools` (each tool is sent with every request, and a request holds 128 at most).
 */
import { createHash } from 'node:crypto';
import type { JsonSchema } from '../tools/schema.js';
import type { Tool, ToolContext } from '../tools/types.js';

/** What a server says of one tool (`tools/list`), unchecked. */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema?: unknown;
}

export const MAX_DESCRIPTION_CHARS = 1_000;
/** A schema is sent with every request of a chat that has the tool: bigger ones cost too much. */
export const MAX_SCHEMA_CHARS = 8_000;
const MAX_NAME = 64;

/** Calls the server's own tool `tool` (the connection does it). */
export type CallTool = (tool: string, args: Record<string, unknown>, ctx: ToolContext) => Promise<string>;

export interface BuiltTools {
  tools: Tool[];
  /** Tools left out, each with why (for one log line). */
  skipped: Array<{ tool: string; why: string }>;
  /** The server's names of the tools past `maxTools`, in its order. */
  overMax: string[];
}

export interface BuildOptions {
  /** Only these of its tools (the server's own names); undefined: all. */
  allowed?: string[] | undefined;
  /** Each tool's deadline; undefined: TOOL_TIMEOUT_MS. */
  timeoutMs?: number | undefined;
  /** Tools taken at most, in the order the server lists them; undefined: no bound. */
  maxTools?: number | undefined;
}

/** The `Tool`s for what the server listed: those allowed, valid and not listed before, up to `maxTools`. */
export function buildTools(server: string, listed: ListedTool[], opts: BuildOptions, call: CallTool): BuiltTools {
  const { allowed, timeoutMs, maxTools = Infinity } = opts;
  const tools: Tool[] = [];
  const skipped: BuiltTools['skipped'] = [];
  const overMax: string[] = [];
  const taken = new Set<string>();
  const seen = new Set<string>();
  for (const t of listed) {
    if (typeof t?.name !== 'string' || t.name === '') continue;
    if (allowed && !allowed.includes(t.name)) continue;
    // The same name again would call the same tool: one is enough.
    if (seen.has(t.name)) {
      skipped.push({ tool: t.name, why: 'it is listed more than once' });
      continue;
    }
    seen.add(t.name);
    const parameters = objectSchema(t.inputSchema);
    if (typeof parameters === 'string') {
      skipped.push({ tool: t.name, why: parameters });
      continue;
    }
    if (tools.length >= maxTools) {
      overMax.push(t.name);
      continue;
    }
    const name = toolName(server, t.name, taken);
    taken.add(name);
    tools.push({
      name,
      description: describe(server, t.description),
      parameters,
      timeoutMs,
      // What a server answers is outside text: memory writes after it wait for the owner (tools/types.ts).
      untrusted: true,
      execute: (args, ctx) => call(t.name, args, ctx),
    });
  }
  return { tools, skipped, overMax };
}

/** Names for a status line: the first `shown`, then how many more. */
export function someNames(names: string[], shown = 5): string {
  const more = names.length - shown;
  return `${names.slice(0, shown).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/**
 * `<server>__<tool>`, made a valid function name; a long or clashing one ends in a hash of the
 * tool's own name — of the name and a count when that is taken too, so no two are alike.
 */
export function toolName(server: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  const name = `${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (name.length <= MAX_NAME && !taken.has(name)) return name;
  for (let n = 0; ; n++) {
    const hash = createHash('sha256')
      .update(n === 0 ? tool : `${tool}\u0000${n}`)
      .digest('hex')
      .slice(0, 8);
    const hashed = `${name.slice(0, MAX_NAME - hash.length - 1)}_${hash}`;
    if (!taken.has(hashed)) return hashed;
  }
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

function describe(server: string, description: string | undefined): string {
  const text = typeof description === 'string' ? description.replace(CONTROL, ' ').trim() : '';
  const short = text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS)}…` : text;
  return `(from MCP server "${server}") ${short || 'No description given.'}`;
}

/** The schema as sent to the model, or why it is refused. */
function objectSchema(raw: unknown): (JsonSchema & { type: 'object' }) | string {
  if (raw === undefined) return { type: 'object', properties: {} };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'its input schema is not an object';
  const schema = raw as Record<string, unknown>;
  if (schema.type !== undefined && schema.type !== 'object') return `its input schema is of type ${JSON.stringify(schema.type)}, not "object"`;
  const text = JSON.stringify(schema);
  if (text.length > MAX_SCHEMA_CHARS) return `its input schema has ${text.length} characters (at most ${MAX_SCHEMA_CHARS})`;
  // A copy: nothing the server sends later can change what was checked. `$schema` names the
  // draft, which some chat APIs refuse in function parameters.
  const { $schema: _draft, ...copy } = JSON.parse(text) as JsonSchema & { $schema?: unknown };
  return { ...copy, type: 'object' };
}
