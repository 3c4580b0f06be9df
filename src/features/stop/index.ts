/**
 * `/stop`: the chat's running answer ends and its waiting messages are skipped. The intake does
 * it as soon as the command arrives, outside the chat's queue (dispatch/stop.ts: it must not
 * wait behind the turn it stops); this feature lists it (/help, Telegram's menu) and answers a
 * /stop that reaches the queue after a restart (stop.ts).
 */
import type { Feature } from '../../turn/feature.js';
import { createStopCommand } from './stop.js';

export function stopFeature(): Feature {
  return { name: 'stop', commands: [createStopCommand()] };
}
