/** The LlmError a call ends with: the test fails when the call succeeds or throws anything else. */
import assert from 'node:assert/strict';
import { LlmError } from '../../src/llm/errors.js';

export async function llmFailure(p: Promise<unknown>): Promise<LlmError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof LlmError, `expected an LlmError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}
