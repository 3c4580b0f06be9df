// pm2: `npm run build && npx pm2 start ecosystem.config.js` (README, "Keep it running"). pm2 runs
// dist/main.js and builds nothing: after a change, `npm run build` before `npx pm2 restart membot`.
// An ES module like the rest of the project: pm2 require()s it, and Node >= 20.19 require()s an
// ES module (with no top-level await) and gets its exports, so `apps` below is what pm2 reads.
// One instance in fork mode: sessions are cached in memory and chats are ordered per process,
// so two instances would race. kill_timeout is longer than SHUTDOWN_TIMEOUT_MS (20 s) so pm2
// lets running turns finish before it sends SIGKILL. Exit code 2 is a settings problem (a line
// in the error log says what to set): restarting cannot fix it, so pm2 stops there and shows
// "stopped" (no restart_delay: with one, pm2 7 shows "waiting restart" for a process it will
// not restart). A crash is restarted at once; 50 restarts within a minute and pm2 gives up.
// Logs: info on stdout (~/.pm2/logs/membot-out-0.log), warnings and errors on stderr
// (~/.pm2/logs/membot-error-0.log); `npx pm2 logs membot` shows both.
// node_args are those of `npm start` (test/start-flags.test.ts keeps them equal): a heap sized
// for a small machine. Without them V8 on a machine with much RAM lets the heap grow to several
// times what is live (docs/BENCHMARKS.md, "Resident memory"). Raise --max-old-space-size if the
// log ever says the heap ran out.
export const apps = [
  {
    name: 'membot',
    script: 'dist/main.js',
    node_args: ['--max-old-space-size=512', '--max-semi-space-size=2'],
    // The project folder, whatever folder pm2 is started from: the daemon reads .env there.
    cwd: import.meta.dirname,
    exec_mode: 'fork',
    instances: 1,
    autorestart: true,
    stop_exit_codes: [2],
    max_restarts: 50,
    kill_timeout: 30000,
    env: { NODE_ENV: 'production' },
  },
];
