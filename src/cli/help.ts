/** `--help` for every command: the usage on stdout and exit 0, before anything is loaded or opened. */

/** `--help` or `-h` anywhere in the arguments, or `help` as the command. */
export function wantsHelp(args: readonly string[]): boolean {
  return args.includes('--help') || args.includes('-h') || args[0] === 'help';
}

/** Prints `usage` and exits 0 when the arguments ask for help. */
export function answerHelp(args: readonly string[], usage: string): void {
  if (!wantsHelp(args)) return;
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
