/**
 * Gate output a model can read (issue 16): identical failures, the same exception at the same place,
 * are grouped into one line and one example. The pytest fixture is pytest 9's real output (object
 * addresses and the timing fixed); unittest's is covered by the replayed gate in submit.test.ts.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { groupFailures } from "../../../../worker/agent/test-failures.js";

const pytestOutput = () =>
  readFile(new URL("../../../fixtures/agent/pytest-errors.txt", import.meta.url), "utf8");

describe("grouping identical test failures", () => {
  it("pytest: one line per group, one example of each, the others named, the summary kept", async () => {
    const grouped = groupFailures(await pytestOutput());
    expect(grouped.split("\n").slice(0, 3)).toEqual([
      "Failures, identical ones grouped (the same exception at the same place):",
      "- 4 errors, all UnboundLocalError at _cachedmethod.py:5, e.g. test_decorator[0]",
      "- 1 failure: AssertionError at test_x.py:19 in test_other",
    ]);
    expect(grouped.match(/^E {7}UnboundLocalError/gm)).toHaveLength(1);
    expect(grouped).toContain(
      "(3 more like the one above: test_decorator[1], test_decorator[2], test_decorator[3])",
    );
    expect(grouped).toContain("E       assert 1 == 2");
    expect(grouped).toContain("1 failed, 4 errors in 0.05s");
  });

  it("leaves output without identical failures as it is", async () => {
    const single =
      "F\nFAIL: test_a (t.T.test_a)\nAssertionError: 1 != 2\n\nRan 1 test in 0.001s\n\nFAILED (failures=1)";
    expect(groupFailures(single)).toBe(single);
    expect(groupFailures("npm ERR! Test failed.")).toBe("npm ERR! Test failed.");
  });
});
