/**
 * A user-facing feature as one record: what it adds to the daemon. Each folder of src/features/
 * exports one factory that takes what the feature needs — its stores and settings, named one by
 * one, never a bag of every service — and returns this. src/app/features.ts lists the features
 * (a new one is its folder plus one line there) and src/app/install.ts installs them:
 *
 * - `systems` go into the pipeline, each at its number in the ORDER table (turn/order.ts); two
 *   systems on one number, or a number the table does not give, are refused when the daemon starts;
 * - `commands` go into the router, after /help and /new, in the order the features are listed
 *   (the order /help and Telegram's menu show them); two commands of one name are refused;
 * - `tools` go into the registry, in the same order (the order a request lists them); two tools of
 *   one name are refused.
 *
 * What a feature keeps on disk is a store the app builds and closes (src/app/build.ts), in the
 * reverse order it built them; a feature holds nothing of its own to close.
 */
import type { System } from './system.js';
import type { Command } from './command.js';
import type { Tool } from '../tools/types.js';

export interface Feature {
  /** The name of its folder, `src/features/<name>/`; two features of one name are refused at start. */
  readonly name: string;
  /** Its pipeline steps. */
  readonly systems?: readonly System[];
  /** Its slash commands. */
  readonly commands?: readonly Command[];
  /** The tools it offers the model. */
  readonly tools?: readonly Tool<any>[];
}
