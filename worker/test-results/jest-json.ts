/**
 * Per-test results from the JSON report jest writes (`--json --outputFile`) and vitest writes in the
 * same shape (`--reporter=json`): each test file with its tests. A test's id is its file (relative to
 * the repository) and its describe blocks and title, `test/a.test.js > group > adds`; a file is a unit
 * of its own, so a file that no longer loads (its tests never ran) counts as failed.
 */
import { relative } from "node:path/posix";
import { z } from "zod";
import { UnreadableReport } from "./junit-xml.js";
import { recordOutcome, type TestOutcomes } from "./test-outcome.js";

const reportSchema = z.object({
  testResults: z.array(
    z.object({
      name: z.string(),
      status: z.string(),
      assertionResults: z
        .array(
          z.object({
            ancestorTitles: z.array(z.string()).default([]),
            title: z.string(),
            status: z.string(),
          }),
        )
        .default([]),
    }),
  ),
});

/** The report's tests; `root`: the repository's directory where the tests ran (file names are absolute). */
export function parseJestJson(text: string, root: string): TestOutcomes {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new UnreadableReport(`it is not JSON (${(error as Error).message})`);
  }
  const parsed = reportSchema.safeParse(data);
  if (!parsed.success) throw new UnreadableReport("it is not a jest or vitest JSON report (no testResults)");
  const results: TestOutcomes = new Map();
  for (const file of parsed.data.testResults) {
    const name = file.name.startsWith("/") ? relative(root, file.name) : file.name;
    // "passed"/"failed"; a file whose tests were all skipped says so and is left out.
    if (file.status === "passed" || file.status === "failed") recordOutcome(results, name, file.status);
    for (const test of file.assertionResults) {
      if (test.status !== "passed" && test.status !== "failed") continue;
      recordOutcome(results, [name, ...test.ancestorTitles, test.title].join(" > "), test.status);
    }
  }
  return results;
}
