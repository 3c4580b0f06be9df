// pm2: `npm ci && npm run build && pm2 start ecosystem.config.js`
// This package is ESM, so the apps are a named export: pm2's require() of this file gets the
// module namespace (Node >= 20.19 loads ESM through require), whose `apps` it reads.
// One instance in fork mode: sessions are cached in memory and chats are ordered per process,
// so two instances would race. kill_timeout is longer than SHUTDOWN_TIMEOUT_MS (20 s) so pm2
// lets running turns finish before it sends SIGKILL.
export const apps = [
  {
    name: 'membot',
    script: 'dist/main.js',
    exec_mode: 'fork',
    instances: 1,
    autorestart: true,
    max_restarts: 50,
    restart_delay: 1000,
    kill_timeout: 30000,
    env: { NODE_ENV: 'production' },
  },
];
