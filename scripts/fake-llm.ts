/**
 * Runs the tests' fake OpenAI-compatible server by hand, for trying the daemon without a key:
 *   npm run fake-llm            (prints its base URL; answers "echo: <your message>")
 * Then: OPENAI_BASE_URL=<that URL> npm start
 *
 * `--reply <text>` answers every request with that text; `--no-record` keeps no request
 * bodies (the benchmarks run it this way, in its own process, as a real LLM would be).
 */
import { startFakeLlm, text } from '../test/helpers/fake-llm.js';

const args = process.argv.slice(2);
const at = args.indexOf('--reply');
const reply = at >= 0 ? args[at + 1] : undefined;
const llm = await startFakeLlm(reply === undefined ? undefined : () => text(reply), { record: !args.includes('--no-record') });
process.stdout.write(`${llm.url}\n`);
process.on('SIGINT', () => void llm.close().then(() => process.exit(0)));
process.on('SIGTERM', () => void llm.close().then(() => process.exit(0)));
