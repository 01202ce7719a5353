/**
 * What a change does to the tests that were already there, for the top of the pull request body: a
 * gate passed by weakening it (an existing test edited or deleted, a test removed or skipped, fewer
 * tests running) must be the first thing a reviewer sees. Read from the unified diff and the test
 * command's output only; which files are tests is decided by the caller through the shared matcher.
 */

export interface TestChangesView {
  /** Test files that exist at the base commit and the change edits (lines changed or removed) or renames. */
  modified: string[];
  /**
   * Test files that exist at the base commit and the change only adds lines to (new tests beside the old
   * ones): nothing there was weakened by editing, so they raise no warning; an added skip still does.
   */
  extended: string[];
  /** Test functions and cases the change adds, as `name (path)`. */
  addedTests: string[];
  /** Test files that exist at the base commit and the change deletes. */
  deleted: string[];
  /** Test functions and cases the change removes, as `name (path)`. */
  removedTests: string[];
  /** Lines the change adds that skip tests or narrow the run, as `path: line`. */
  skips: string[];
  /** How many tests ran on the unchanged code and on the change, when the output says. */
  ran?: { before: number; after: number };
}

interface FileDiff {
  path: string;
  oldPath: string | null;
  added: string[];
  removed: string[];
}

/** Splits a `git diff` into files: their paths (null old path for a new file) and changed lines. */
function parseDiff(patch: string): FileDiff[] {
  const files: FileDiff[] = [];
  let current: FileDiff | null = null;
  for (const line of patch.split("\n")) {
    const header = /^diff --git "?a\/(.*?)"? "?b\/(.*?)"?$/.exec(line);
    if (header) {
      current = { path: header[2] ?? "", oldPath: header[1] ?? "", added: [], removed: [] };
      files.push(current);
      continue;
    }
    if (!current) continue;
    if (line.startsWith("new file mode")) current.oldPath = null;
    else if (line.startsWith("deleted file mode")) current.path = "";
    else if (line.startsWith("+") && !line.startsWith("+++ ")) current.added.push(line.slice(1));
    else if (line.startsWith("-") && !line.startsWith("--- ")) current.removed.push(line.slice(1));
  }
  return files;
}

// A test's definition: Python, JavaScript/TypeScript (it/test), Go.
const TEST_DEFINITIONS = [
  /^\s*(?:async\s+)?def\s+(test\w*)\s*\(/,
  /^\s*(?:it|test)(?:\.\w+)*\s*\(\s*(['"`])(.+?)\1/,
  /^\s*func\s+(Test\w*)\s*\(/,
];

function testName(line: string): string | null {
  for (const pattern of TEST_DEFINITIONS) {
    const match = pattern.exec(line);
    if (match) return match[2] ?? match[1] ?? null;
  }
  return null;
}

/** Added lines that skip tests or make others not run (`.only`). */
const SKIP =
  /@(?:unittest\.)?skip|@pytest\.mark\.(?:skip|xfail)|pytest\.skip\(|self\.skipTest\(|\b(?:it|test|describe)\.(?:skip|todo|only)\b|\b(?:xit|xtest|xdescribe|fit|fdescribe)\s*\(|\bt\.Skip(?:Now)?\(/;

/**
 * What the change does to existing tests. `testFiles` are the diff's paths that are test files (by
 * the repository's test paths); those the diff does not create existed at the base commit.
 */
export function analyseTestChanges(input: {
  patch: string;
  testFiles: readonly string[];
  outputBefore?: string;
  outputAfter?: string;
}): TestChangesView {
  const view: TestChangesView = {
    modified: [],
    extended: [],
    addedTests: [],
    deleted: [],
    removedTests: [],
    skips: [],
  };
  const isTest = (path: string | null) => path !== null && input.testFiles.includes(path);
  for (const file of parseDiff(input.patch)) {
    if (isTest(file.oldPath) && file.oldPath) {
      if (file.path === "") view.deleted.push(file.oldPath);
      else if (file.path !== file.oldPath && !isTest(file.path)) view.deleted.push(file.oldPath);
      else if (file.removed.length === 0 && file.path === file.oldPath) view.extended.push(file.oldPath);
      else view.modified.push(file.oldPath);
    }
    const where = file.path || file.oldPath || "?";
    const kept = new Set(file.added.map(testName).filter((name) => name !== null));
    const had = new Set(file.removed.map(testName).filter((name) => name !== null));
    for (const line of file.removed) {
      const name = testName(line);
      if (name && !kept.has(name)) view.removedTests.push(`${name} (${where})`);
    }
    if (isTest(file.path || null)) {
      for (const name of kept) if (!had.has(name)) view.addedTests.push(`${name} (${where})`);
    }
    for (const line of file.added) if (SKIP.test(line)) view.skips.push(`${where}: ${line.trim()}`);
  }
  const before = testsRan(input.outputBefore ?? "");
  const after = testsRan(input.outputAfter ?? "");
  if (before !== null && after !== null && after < before) view.ran = { before, after };
  return view;
}

/** True when the view has anything a reviewer must look at first. */
export function weakensTests(view: TestChangesView): boolean {
  return (
    view.modified.length + view.deleted.length + view.removedTests.length + view.skips.length > 0 ||
    view.ran !== undefined
  );
}

/**
 * How many tests ran, from the summary line of unittest (`Ran N tests`), pytest (`N passed, M failed
 * in 0.1s`), jest (`Tests: ... N total`) or vitest (`Tests  N passed | M skipped (T)`); the last
 * such line counts. Skipped and todo tests did not run. Null when the output has no summary.
 */
export function testsRan(output: string): number | null {
  const text = output.replace(/\x1b\[[0-9;]*m/g, "");
  const last = (pattern: RegExp) => [...text.matchAll(pattern)].at(-1);
  const count = (line: string, word: RegExp) =>
    Number(new RegExp(`(\\d+) ${word.source}`).exec(line)?.[1] ?? 0);
  const unittest = last(/^Ran (\d+) tests? in /gm);
  if (unittest) return Number(unittest[1]);
  const jest = last(/^Tests:\s+(.*\b\d+ total)\s*$/gm);
  if (jest?.[1]) {
    const line = jest[1];
    return count(line, /total/) - count(line, /skipped/) - count(line, /todo/);
  }
  const vitest = last(/^\s*Tests\s+(.*)\((\d+)\)\s*$/gm);
  if (vitest?.[1]) return Number(vitest[2]) - count(vitest[1], /skipped/) - count(vitest[1], /todo/);
  const pytest = last(/^[=\s]*((?:\d+ \w+(?:, )?)+) in [\d.]+s\b.*$/gm);
  if (pytest?.[1]) {
    const line = pytest[1];
    return ["passed", "failed", "errors?", "xfailed", "xpassed"].reduce(
      (sum, word) => sum + count(line, new RegExp(word)),
      0,
    );
  }
  return null;
}
