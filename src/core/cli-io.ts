/** Where a CLI command writes its lines (stdout and stderr in `npm run memory`, arrays in tests). */
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}
