/**
 * Text from tools cannot rewrite memory on its own. A memory tool's call (MEMORY_WRITE_TOOLS)
 * that the model made after it had read the output of an `untrusted` tool in the turn (an MCP
 * server's: ToolContext.afterUntrusted) is not run: it is held (memory/pending.ts), and the
 * model reads that it waits for the owner's approval, so it does not tell the user "saved".
 * Unless the user's own message asked to remember something (remember-words.ts): then the
 * write is theirs and runs at once.
 *
 * The owner sees held writes in `/memory pending` and on the memory page, and approves one
 * (it then runs through the registry exactly as the tool call would have: arguments checked,
 * the rewrite guard, a MEMORY.md version) or rejects it (dropped). After PENDING_TTL_MS a held
 * write is dropped unapplied.
 */
import { randomBytes } from 'node:crypto';
import type { Chat } from '../../core/chat.js';
import type { Logger } from '../../core/log.js';
import { clipText, collapseLineBreaks } from '../../core/text.js';
import type { MemoryService } from '../../memory/service.js';
import { PENDING_TTL_MS, type PendingWrite, type PendingWrites } from '../../memory/pending.js';
import type { ToolOutcome, ToolRegistry } from '../../tools/registry.js';
import type { Tool, ToolContext } from '../../tools/types.js';
import { rememberAsk } from './remember-words.js';

/** What the model reads instead of the result of a write it held. */
export const HELD = (w: PendingWrite): string =>
  `Held, not saved: this ${w.tool} call came after text from outside the bot (${w.after.join(', ')}), so it waits for the owner's approval (${w.id}; /memory pending). Tell the user it is not saved yet.`;

/** What the owner is told of a write approved or rejected, and what the page shows. */
export interface PendingView {
  id: string;
  tool: string;
  /** The arguments, shortened for a list. */
  what: string;
  after: string[];
  heldAt: string;
  expiresAt: string;
}

export type Decision = { ok: true; result: string } | { ok: false; reason: string };

export class PendingApprovals {
  constructor(
    private readonly store: PendingWrites,
    private readonly memory: Pick<MemoryService, 'scopeKey'>,
    /** The registry the held call runs through when approved (the one the turn's tools are in). */
    private readonly tools: Pick<ToolRegistry, 'execute'>,
  ) {}

  private scopeOf(chat: Chat): string {
    return this.memory.scopeKey(chat.channel, chat.chatId);
  }

  /** Wraps a memory tool: held when the model had read outside text and the user did not ask (see the top of this file); `onHeld` hears of each. */
  holding<A>(tool: Tool<A>, onHeld?: (turnId: string | undefined) => void): Tool<A> {
    return {
      ...tool,
      execute: async (args, ctx) => {
        const after = ctx.afterUntrusted ?? [];
        if (after.length === 0 || (ctx.userText !== undefined && rememberAsk(ctx.userText) !== undefined)) return tool.execute(args, ctx);
        const w = await this.hold(tool.name, args, ctx, after);
        ctx.log.warn({ tool: tool.name, held: w.id, after }, 'a memory write after outside text is held for the owner');
        onHeld?.(ctx.turnId);
        return HELD(w);
      },
    };
  }

  private async hold(tool: string, args: unknown, ctx: ToolContext, after: readonly string[]): Promise<PendingWrite> {
    const now = Date.now();
    const w: PendingWrite = {
      id: `pw_${randomBytes(4).toString('hex')}`,
      scope: this.scopeOf(ctx.chat),
      channel: ctx.chat.channel,
      chatId: ctx.chat.chatId,
      group: ctx.chat.group,
      conversationId: ctx.conversationId,
      tool,
      args: JSON.stringify(args),
      after: [...after],
      heldAt: new Date(now).toISOString(),
      expiresAt: new Date(now + PENDING_TTL_MS).toISOString(),
    };
    await this.store.hold(w);
    return w;
  }

  /** The chat's held writes, oldest first. */
  async list(chat: Chat): Promise<PendingView[]> {
    return (await this.store.list(this.scopeOf(chat))).map((w) => ({
      id: w.id,
      tool: w.tool,
      what: describeArgs(w.args),
      after: w.after,
      heldAt: w.heldAt,
      expiresAt: w.expiresAt,
    }));
  }

  /** Runs the held call as the tool would have run it (from its chat, as a manager: the approver is one). */
  async approve(chat: Chat, id: string, log: Logger): Promise<Decision> {
    const w = await this.store.take(this.scopeOf(chat), id);
    if (!w) return { ok: false, reason: `no held write ${id} (already approved, rejected or expired?)` };
    const outcome: ToolOutcome = await this.tools.execute(
      { id: w.id, name: w.tool, arguments: w.args },
      {
        chat: { channel: w.channel, chatId: w.chatId, group: w.group, manages: true },
        conversationId: w.conversationId,
        log,
        deadline: new AbortController().signal,
      },
    );
    log.info({ held: w.id, tool: w.tool, ok: outcome.ok }, 'a held memory write was approved');
    return { ok: true, result: outcome.content };
  }

  /** Drops the held call unapplied. */
  async reject(chat: Chat, id: string, log: Logger): Promise<Decision> {
    const w = await this.store.take(this.scopeOf(chat), id);
    if (!w) return { ok: false, reason: `no held write ${id} (already approved, rejected or expired?)` };
    log.info({ held: w.id, tool: w.tool }, 'a held memory write was rejected');
    return { ok: true, result: `Rejected: ${w.tool} ${w.id} is dropped; nothing was changed.` };
  }
}

/** The arguments as one short line: `content: "…"`, `fact: "…"`. */
function describeArgs(args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return clipText(collapseLineBreaks(args), 300);
  }
  const fields = parsed && typeof parsed === 'object' ? Object.entries(parsed as Record<string, unknown>) : [];
  return clipText(collapseLineBreaks(fields.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')), 300);
}

/** `/memory pending`, `/memory approve <id>`, `/memory reject <id>`: the reply. */
export async function runPendingSubcommand(pending: PendingApprovals, chat: Chat, sub: string, id: string, log: Logger): Promise<string> {
  if (sub === 'pending') {
    const list = await pending.list(chat);
    if (list.length === 0) return 'No memory changes wait for your approval.';
    const lines = list.map(
      (p) =>
        `• ${p.id} — ${p.tool} (${p.what}), after ${p.after.join(', ')}; held ${p.heldAt.slice(0, 16).replace('T', ' ')} UTC, dropped ${p.expiresAt.slice(0, 10)}`,
    );
    return `⏸ Memory changes held for your approval (made after text from outside the bot):\n${lines.join('\n')}\n\n/memory approve <id> applies one, /memory reject <id> drops it.`;
  }
  if (!/^pw_[0-9a-f]{8}$/.test(id)) return `Say which one: /memory ${sub} pw_… (the id /memory pending lists).`;
  const d = sub === 'approve' ? await pending.approve(chat, id, log) : await pending.reject(chat, id, log);
  if (!d.ok) return `Nothing done: ${d.reason}. /memory pending lists what waits.`;
  return sub === 'approve' ? `Approved ${id}: ${d.result}` : d.result;
}
