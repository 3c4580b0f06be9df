/** Placeholder until the load section is written: reports that it was not measured. */
export async function benchPipeline(): Promise<Record<string, string>> {
  return { pipeline: 'not measured yet (see docs/BENCHMARKS.md)' };
}
