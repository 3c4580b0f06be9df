/** `/status`: how the chat stands — model, conversation, memory, reminders, tokens — read from where each is kept (status.ts). */
import type { Feature } from '../../turn/feature.js';
import { createStatusCommand, type StatusDeps } from './status.js';

export function statusFeature(deps: StatusDeps): Feature {
  return { name: 'status', commands: [createStatusCommand(deps)] };
}
