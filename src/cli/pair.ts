/**
 * `npm run pair -- approve <CODE> | list | revoke <id|@username|group id>` — the owner's side of
 * Telegram pairing (and of the groups approved with /allow in the group: group-gate.ts). Works on
 * the pairing where the daemon keeps it (app/stores.ts): `workspace/telegram/pairing.json`
 * (WORKSPACE_DIR, from the environment or .env) under the same lock the running daemon uses, or
 * with DATABASE_URL its row in PostgreSQL, changed in a transaction that holds it; so it is safe
 * while the bot runs, and an approval takes effect on the user's next message.
 *
 * Exit codes: 0 done, 1 nothing matched (unknown code, unknown user), 2 usage error.
 */
import { pathToFileURL } from 'node:url';
import { loadDotEnv } from '../config/dotenv.js';
import { loadConfig } from '../config/env.js';
import { CHANNELS } from '../app/channels.js';
import { FilePairingStore } from '../channels/telegram/pairing-file.js';
import type { PairingStore, TelegramUserRef } from '../channels/telegram/pairing.js';
import { telegramChannel } from '../channels/telegram/provider.js';
import { silentLogger } from '../core/log.js';
import { openChannelState } from '../app/stores.js';
import { answerHelp } from './help.js';

export interface PairCliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

const USAGE = [
  'usage: npm run pair -- approve <CODE>        let the user who got this code talk to the bot',
  '       npm run pair -- list                  approved users and groups, pending codes, strangers waiting',
  '       npm run pair -- revoke <id|@username> take an approval back (a group: its id, e.g. -1001234567890)',
].join('\n');

function utc(iso: string): string {
  return `${iso.replace('T', ' ').slice(0, 16)} UTC`;
}

function who(u: TelegramUserRef): string {
  const extras = [u.username ? `@${u.username}` : '', u.name ?? ''].filter(Boolean).join(', ');
  return extras ? `${u.userId} (${extras})` : u.userId;
}

/** `store`: where the pairing is kept (the workspace's file by default). */
export async function runPair(
  args: string[],
  workspaceDir: string,
  io: PairCliIo,
  store: PairingStore = FilePairingStore.inWorkspace(workspaceDir),
): Promise<number> {
  const [cmd, arg] = args;
  switch (cmd) {
    case 'approve': {
      if (!arg) break;
      const approved = await store.approve(arg);
      if (!approved) {
        io.err(
          `pairing.unknown_code: no pending pairing has code ${arg.toUpperCase()} (mistyped, already used, or older than 1 hour) — run "npm run pair -- list" to see pending codes`,
        );
        return 1;
      }
      io.out(`Approved ${who(approved)}. They can write to the bot now.`);
      return 0;
    }
    case 'revoke': {
      if (!arg) break;
      if (await store.revoke(arg)) {
        io.out(
          arg.trim().startsWith('-')
            ? `Revoked group ${arg.trim()}: the bot stays quiet there from its next message (TELEGRAM_ALLOWED_GROUPS still serves listed groups).`
            : `Revoked ${arg}. Their next message gets a new pairing code (TELEGRAM_ALLOWED_USERS still lets listed users in).`,
        );
        return 0;
      }
      io.err(`No approved user, group or pending code matches ${arg} — run "npm run pair -- list"`);
      return 1;
    }
    case 'list': {
      const { approved, pending, waiting, groups } = await store.list();
      io.out(`Approved users (${approved.length}):`);
      for (const a of approved) io.out(`  ${who(a)}  approved ${utc(a.approvedAt)}`);
      io.out(`Approved groups (${groups.length}, with /allow):`);
      for (const g of groups) io.out(`  ${g.chatId}${g.title ? ` (${g.title})` : ''}  approved ${utc(g.approvedAt)} by ${g.approvedBy}`);
      io.out(`Pending codes (${pending.length}, at most 3):`);
      for (const p of pending) io.out(`  ${p.code}  ${who(p)}  expires ${utc(p.expiresAt)}`);
      // The backlog: who wrote and got no code. A user id here can be let in with TELEGRAM_ALLOWED_USERS.
      io.out(`Waiting (${waiting.length}, last 24 hours):`);
      for (const w of [...waiting].sort((a, b) => b.lastAt.localeCompare(a.lastAt))) {
        const why = w.reason === 'full' ? 'turned away: all 3 codes were taken' : `code expired unapproved; a new code from ${utc(w.retryAfter ?? w.since)}`;
        io.out(`  ${who(w)}  ${why}; last message ${utc(w.lastAt)}`);
      }
      return 0;
    }
    default:
      break;
  }
  io.err(USAGE);
  return 2;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  answerHelp(process.argv.slice(2), USAGE);
  loadDotEnv();
  // Only WORKSPACE_DIR and DATABASE_URL matter here; other settings need not be valid to manage pairings.
  const { config } = loadConfig(process.env, process.cwd(), CHANNELS);
  const io = { out: (l: string) => process.stdout.write(`${l}\n`), err: (l: string) => process.stderr.write(`${l}\n`) };
  openChannelState(config, silentLogger(), telegramChannel)
    .then(async ({ state, close }) => {
      try {
        return await runPair(process.argv.slice(2), config.workspaceDir, io, state?.pairing);
      } finally {
        await close();
      }
    })
    .then(
      (code) => process.exit(code),
      (err: unknown) => {
        process.stderr.write(`pair: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
}
