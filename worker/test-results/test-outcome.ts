/**
 * Per-test results, as runners report them (worker/test-results/): each test's id and whether it passed.
 * Skipped tests are left out. Ids are unique within one run's results and stable between runs of the
 * same tests, so a run can be compared with another test by test (the gate against the baseline, the
 * evaluation's grading).
 */
export type TestOutcome = "passed" | "failed";

/** Test ids and their outcomes, in the order reported. */
export type TestOutcomes = Map<string, TestOutcome>;

/** One run's per-test results and where they were read from. */
export interface TestResults {
  tests: TestOutcomes;
  /** Where each part came from, for people ("pytest's JUnit XML", "go test's output"). */
  sources: string[];
  /** Reports that were there but not read (too large, malformed), said rather than trusted. */
  problems: string[];
}

/** Records `outcome` for `id`; a test reported twice (a retry, a re-run) counts as failed if either run failed. */
export function recordOutcome(tests: TestOutcomes, id: string, outcome: TestOutcome): void {
  if (tests.get(id) !== "failed") tests.set(id, outcome);
}
