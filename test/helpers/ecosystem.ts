/**
 * The apps of ecosystem.config.js as pm2 reads them: pm2 `require()`s the file (pm2's
 * Common.parseConfig), and on Node >= 20.19 require() loads an ES module and returns its
 * exports. Read in a plain Node child — this test process runs under tsx, whose hooks would
 * load the file whatever Node can do on its own.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './child.js';

export const ecosystemFile = path.join(repoRoot, 'ecosystem.config.js');

export function ecosystemApps(): Array<Record<string, unknown>> {
  const out = execFileSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(require(process.argv[1]).apps))', ecosystemFile], {
    encoding: 'utf8',
  });
  return JSON.parse(out) as Array<Record<string, unknown>>;
}
