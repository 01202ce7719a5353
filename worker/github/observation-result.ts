/**
 * The one line of a step's observation the trajectory summary shows (issue 24: a test run showed its
 * first line, `....[100%]`, instead of its result). A shell command's output shows its result: a test
 * runner's summary line (pytest, unittest, go test, vitest, jest, cargo test) when it has one, else its
 * last meaningful line, where commands print what they came to. The ACI's other tools (open, edit,
 * search, submit…) say what they did on their first line, which stays.
 */

/** The ACI's closing lines of every observation: the open file and the directory, not the result. */
const STATE_LINE = /^\((Open file|Current directory): .*\)$/;
/** Lines that carry no result: rules (`-----`, `=====`), progress dots, pytest's `[100%]` bar alone. */
const NOISE = /^(\s*[-=_~⎯─]{3,}\s*|\s*[.sFExX]+\s*(\[\s*\d+%\])?\s*)$/;
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** Tools whose observation is a command's output; every other tool's first line says what it did. */
const SHELL_TOOLS = new Set(["bash"]);

export function observationResult(tool: string, observation: string): string {
  const lines = observation
    .replace(ANSI, "")
    .split("\n")
    .filter((line) => !STATE_LINE.test(line.trim()));
  if (!SHELL_TOOLS.has(tool)) return lines.find((line) => line.trim() !== "")?.trim() ?? "";
  return testSummary(lines) ?? lastMeaningfulLine(lines);
}

function lastMeaningfulLine(lines: string[]): string {
  return lines.findLast((line) => line.trim() !== "" && !NOISE.test(line))?.trim() ?? "";
}

/** A summary found in the output: where it is (the latest one wins) and how it reads. */
interface Found {
  index: number;
  text: string;
}

/** The test runners' result lines, each read from the output as the runner prints it. */
const SUMMARIES: ((lines: string[]) => Found | null)[] = [
  // pytest: `=== 1 failed, 3 passed in 0.03s ===` (or without the rules under -q).
  (lines) =>
    lastMatch(
      lines,
      /^[=\s]*((?:\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)(?:, )?)+ in [\d.]+s\b[^=]*?|no tests ran in [\d.]+s\b[^=]*?)[=\s]*$/,
    ),
  // unittest: `Ran 4 tests in 0.001s`, then `OK` or `FAILED (failures=1)` after a blank line.
  (lines) => {
    const ran = lastMatch(lines, /^(Ran \d+ tests? in [\d.]+s)$/);
    if (!ran) return null;
    const verdict = lines
      .slice(ran.index + 1)
      .find((line) => line.trim() !== "")
      ?.trim();
    return verdict && /^(OK|FAILED)\b/.test(verdict)
      ? { index: ran.index, text: `${ran.text}: ${verdict}` }
      : ran;
  },
  goSummary,
  // vitest: `      Tests  1 failed | 2 passed (3)`.
  (lines) => lastMatch(lines, /^\s*(Tests\s+.*\(\d+\))\s*$/, (text) => text.replace(/\s{2,}/, " ")),
  // jest: `Tests:       1 failed, 2 passed, 3 total`.
  (lines) => lastMatch(lines, /^(Tests:\s+.*\d+ total)\s*$/, (text) => text.replace(/\s{2,}/, " ")),
  cargoSummary,
];

function testSummary(lines: string[]): string | null {
  const found = SUMMARIES.map((read) => read(lines)).filter((hit): hit is Found => hit !== null);
  return found.sort((a, b) => a.index - b.index).at(-1)?.text ?? null;
}

function lastMatch(
  lines: string[],
  pattern: RegExp,
  shape: (text: string) => string = (t) => t,
): Found | null {
  for (let index = lines.length - 1; index >= 0; index--) {
    const match = pattern.exec(lines[index]!);
    if (match?.[1]) return { index, text: shape(match[1].trim()) };
  }
  return null;
}

/**
 * go test: one line per package (`ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]`);
 * a failed package is the result, with how many of the packages failed when there were several.
 */
function goSummary(lines: string[]): Found | null {
  const packages = lines.flatMap((line, index) => {
    const match = /^(ok|FAIL)\s+(\S+)\s+(\S.*)$/.exec(line);
    return match
      ? [{ index, passed: match[1] === "ok", text: `${match[1]} ${match[2]} ${match[3]!.trim()}` }]
      : [];
  });
  const last = packages.at(-1);
  if (!last) return null;
  const failed = packages.filter((pkg) => !pkg.passed);
  if (failed.length > 0) {
    const of = packages.length > 1 ? ` (${failed.length} of ${packages.length} packages failed)` : "";
    return { index: last.index, text: `${failed[0]!.text}${of}` };
  }
  return { index: last.index, text: packages.length > 1 ? `ok: ${packages.length} packages` : last.text };
}

/**
 * cargo test: `test result: ok. 3 passed; 0 failed; …` per test binary, doc tests last (often `0
 * passed`). A failed binary is the result; else the passed tests of all binaries together.
 */
function cargoSummary(lines: string[]): Found | null {
  const results = lines.flatMap((line, index) => {
    const match = /^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed;/.exec(line);
    return match ? [{ index, line: line.trim(), ok: match[1] === "ok", passed: Number(match[2]) }] : [];
  });
  const last = results.at(-1);
  if (!last) return null;
  const failed = results.find((result) => !result.ok);
  if (failed) return { index: last.index, text: failed.line.replace(/; finished in .*$/, "") };
  const passed = results.reduce((sum, result) => sum + result.passed, 0);
  return { index: last.index, text: `test result: ok. ${passed} passed` };
}
