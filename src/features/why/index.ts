/**
 * "Why did you say that?": WhyRecord (45) keeps, for each answer, what it was built from — the
 * prompt's memory and what the memory tools returned (sources.ts, system.ts) — in the WhyStore
 * (store.ts: files, store-pg.ts: PostgreSQL), and `/why` lists it with a way to forget or correct
 * each item (command.ts). A /forget takes the words out of the records too, and purge the chat's.
 */
import type { Feature } from '../../turn/feature.js';
import { createWhyCommand, type WhyCommandDeps } from './command.js';
import { createWhyRecordSystem } from './system.js';

export function whyFeature(deps: WhyCommandDeps): Feature {
  return { name: 'why', systems: [createWhyRecordSystem({ store: deps.store })], commands: [createWhyCommand(deps)] };
}
