/** The outcome of one message's handling, as the intake (intake.ts) settles it. */

/**
 * How handling a message ends. `settle` acts on it in a fixed order: close the journal entry,
 * give the slot back, tell the user, wind down.
 */
export interface Ending {
  /** Close the journal entry. Not on a failure: the entry stays open and the next start retries. */
  close: boolean;
  /** Give the dispatcher slot back before telling the user (a turn stopped at its deadline). */
  release?: boolean;
  /** What the user is told, worked out after the entry is closed (a command runs then). */
  say?: string | (() => Promise<string>);
  /** A failed turn: the user gets the apology with this id (the runner logged the failure). */
  failure?: { errorId: string; code: string | undefined };
  /** A failed `say` is only logged (the deadline notice), not followed by an apology. */
  quiet?: boolean;
  /**
   * Its chat went to another process (stop.ts `handOver`): what this process recorded of the
   * message is not saved, so its copy of the chat's session is dropped once the turn wound down.
   */
  handedOver?: boolean;
  /** Still in the chat's queue after telling the user: work that must end before the chat's next message. */
  windDown?: () => Promise<void>;
}
