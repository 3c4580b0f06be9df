/**
 * `/export`: everything kept for this chat as one Markdown file (privacy/export.ts). On a channel
 * that can send files (Telegram) it arrives as a document; elsewhere (the console) it is written
 * to `workspace/exports/{chat}/` and the reply gives the path.
 */
import path from 'node:path';
import type { Command } from '../../turn/command.js';
import { buildExport, type ExportDeps } from './export.js';
import { ensureDir, writeFileAtomic } from '../../storage/atomic.js';
import { sessionFileKey } from '../../storage/paths.js';

export interface ExportCommandDeps extends ExportDeps {
  /** Where a channel that cannot send files gets the export written (`exports/{chat}/`). */
  workspaceDir: string;
}

export function createExportCommand(deps: ExportCommandDeps): Command {
  return {
    name: 'export',
    description: 'Get everything I keep about this chat as one Markdown file',
    access: 'managers',
    async run({ inbound, document }) {
      const chat = { channel: inbound.channel, chatId: inbound.chatId };
      const now = new Date();
      const text = await buildExport(deps, chat, now);
      const stamp = now.toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');
      const filename = `memory-export-${stamp}.md`;
      if (document) {
        await document({ filename, content: Buffer.from(text, 'utf8'), caption: 'Everything I keep about this chat.' });
        return `📦 Sent: ${filename} (${Buffer.byteLength(text).toLocaleString('en-US')} bytes) — MEMORY.md, facts, notes, history and this conversation.`;
      }
      const dir = path.join(deps.workspaceDir, 'exports', sessionFileKey(inbound.channel, inbound.chatId));
      await ensureDir(dir);
      const file = path.join(dir, filename);
      await writeFileAtomic(file, text);
      return `📦 Exported everything I keep about this chat to ${path.resolve(file)}`;
    },
  };
}
