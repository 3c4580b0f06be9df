/**
 * Runs the tests' fake OpenAI-compatible server by hand, for trying the daemon without a key:
 *   npm run fake-llm            (prints its base URL; answers "echo: <your message>")
 * Then: OPENAI_BASE_URL=<that URL> npm start
 */
import { startFakeLlm } from '../test/helpers/fake-llm.js';

const llm = await startFakeLlm();
process.stdout.write(`${llm.url}\n`);
process.on('SIGINT', () => void llm.close().then(() => process.exit(0)));
process.on('SIGTERM', () => void llm.close().then(() => process.exit(0)));
