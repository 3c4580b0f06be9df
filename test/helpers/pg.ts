/**
 * A throwaway PostgreSQL for tests: its own cluster (initdb) in a temporary folder, on a free
 * port of 127.0.0.1 only, its Unix socket in that folder, a random password (scram-sha-256, so
 * the URL's password is really used). `stop()` ends the server and removes everything. One
 * cluster per test file: starting one takes a second or two, a fresh database in it
 * (`createDatabase`) a fraction of that.
 *
 * Binaries: Debian's (/usr/lib/postgresql/<version>/bin, the newest), else initdb on PATH; none
 * installed is an error naming the package, never a silent skip. initdb and the server refuse
 * to run as root, and CI runs as root: then they run as the `postgres` user (runuser), in a
 * folder handed to it.
 *
 * Speed settings only where tests cannot see them: fsync and full-page writes are off (they
 * matter when the machine loses power, not when the server or a client process dies); commits
 * stay synchronous, so a server stopped or killed keeps every commit it acknowledged. A
 * benchmark asks for them on (`durable`): its figures are a production server's.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { randomBytes } from 'node:crypto';

export interface PgCluster {
  /** The cluster's `postgres` database, as the superuser (with the password). */
  url: string;
  password: string;
  /** A fresh empty database (`name`, or a new one), and its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (`pg_ctl stop -m fast` by default: what a restart does to connections), keeping its data. */
  halt(mode?: 'fast' | 'immediate'): void;
  /** Starts it again after `halt`, on the same port. */
  resume(): void;
  /** Stops the server and removes the folder. */
  stop(): Promise<void>;
}

/** The folder of initdb and pg_ctl: the newest Debian version installed, else PATH's. */
export function pgBinDir(): string {
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian)
    ? readdirSync(debian)
        .filter((v) => /^\d+$/.test(v) && existsSync(path.join(debian, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length > 0) return path.join(debian, versions[0]!, 'bin');
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (found) return path.dirname(found);
  throw new Error(
    'PostgreSQL is not installed (no initdb in /usr/lib/postgresql/*/bin or on PATH): the PostgreSQL tests need it — apt-get install -y postgresql',
  );
}

const clusters = new Set<{ bin: string; data: string; asUser: string | undefined }>();
// A test file that ends without stop() (a failed before(), an uncaught error) must not leave a server running.
process.on('exit', () => {
  for (const c of clusters) run(c.bin, 'pg_ctl', ['stop', '-D', c.data, '-m', 'immediate', '-w'], c.asUser, true);
});

export interface PgOptions {
  /** fsync and full-page writes on, as a production server has them (benchmarks); tests leave them off. */
  durable?: boolean;
}

export async function startPg(opts: PgOptions = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  const asUser = process.getuid?.() === 0 ? 'postgres' : undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'membot-pg-'));
  // Files this process writes for the server are handed to its user.
  const own = (file: string) => {
    if (!asUser) return;
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, asUser], { encoding: 'utf8' }).trim()));
    chownSync(file, uid!, gid!);
  };
  own(dir);
  const data = path.join(dir, 'data');
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const pwfile = path.join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o644 });
  run(bin, 'initdb', ['-D', data, '-U', 'postgres', `--pwfile=${pwfile}`, '-A', 'scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync'], asUser);
  rmSync(pwfile);
  const cluster = { bin, data, asUser };
  clusters.add(cluster);

  let port = 0;
  const start = () => run(bin, 'pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', path.join(dir, 'server.log')], asUser);
  // The port the OS gave us could be taken before the server binds it: try another.
  for (let tries = 1; ; tries++) {
    port = await freePort();
    writeFileSync(
      path.join(data, 'postgresql.auto.conf'),
      [
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        ...(opts.durable ? [] : ['fsync = off', 'full_page_writes = off']),
        'max_connections = 200',
        '',
      ].join('\n'),
    );
    own(path.join(data, 'postgresql.auto.conf'));
    try {
      start();
      break;
    } catch (err) {
      if (tries >= 3) throw new Error(`${(err as Error).message}\n${tail(path.join(dir, 'server.log'))}`);
    }
  }

  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  let made = 0;
  return {
    url,
    password,
    async createDatabase(name = `t${process.pid}_${++made}`) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url.replace(/\/postgres$/, `/${name}`);
    },
    halt(mode = 'fast') {
      run(bin, 'pg_ctl', ['stop', '-D', data, '-m', mode, '-w'], asUser);
    },
    resume() {
      start();
    },
    async stop() {
      run(bin, 'pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w'], asUser, true);
      clusters.delete(cluster);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs a PostgreSQL program (as `asUser` when given), throwing with its output when it fails unless `quiet`. */
function run(bin: string, program: string, args: string[], asUser: string | undefined, quiet = false): void {
  const exe = path.join(bin, program);
  const [cmd, argv] = asUser ? ['runuser', ['-u', asUser, '--', exe, ...args]] : [exe, args];
  // The cwd is a folder every user may enter: initdb and the server complain about one they cannot.
  const res = spawnSync(cmd, argv, { cwd: '/', encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
  if (res.status !== 0 && !quiet) {
    throw new Error(`${program} ${args[0]} failed (${res.error?.message ?? `exit ${res.status}`}): ${(res.stderr || res.stdout).trim()}`);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}
