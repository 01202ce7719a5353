/**
 * Which pull requests can become instances, as SWE-bench chose them: merged, closing an issue of the
 * same repository, and changing both tests and code. Pure: the pull request's fields and file names in,
 * the linked issues and the split of files out, or the reason it is skipped.
 */

/** Why a pull request gives no instance. */
export type SkipReason =
  | "not_merged"
  | "no_linked_issue"
  | "no_test_change"
  | "no_code_change"
  | "no_test_runner"
  | "patch_does_not_apply"
  | "no_failing_test";

/**
 * GitHub's closing keywords in a pull request's description, followed by `#N`, `OWNER/REPO#N` or the
 * issue's URL. https://docs.github.com/en/issues/tracking-your-work-with-issues/using-issues/linking-a-pull-request-to-an-issue
 */
const CLOSING =
  /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+(?:(?:([\w.-]+)\/([\w.-]+))?#(\d+)|https?:\/\/[^\s/]+\/([\w.-]+)\/([\w.-]+)\/issues\/(\d+))\b/gi;

/** The issue numbers of `owner/repo` that `body` closes, in order of first mention. */
export function closedIssues(body: string | null, owner: string, repo: string): number[] {
  const numbers: number[] = [];
  for (const match of (body ?? "").matchAll(CLOSING)) {
    const [, o1, r1, n1, o2, r2, n2] = match;
    const [o, r, n] = n1 !== undefined ? [o1, r1, n1] : [o2, r2, n2];
    // Another repository's issue is not this history's bug.
    if (
      o !== undefined &&
      (o.toLowerCase() !== owner.toLowerCase() || r?.toLowerCase() !== repo.toLowerCase())
    )
      continue;
    const number = Number(n);
    if (!numbers.includes(number)) numbers.push(number);
  }
  return numbers;
}

/**
 * Test files by the conventions of the common runners: test directories, test_*.py and *_test.py,
 * *_test.go, *.test.js / *.spec.ts and the like, conftest.py.
 */
const TEST_PATH =
  /(^|\/)(tests?|spec|specs|__tests__|testing)\/|(^|\/)test_[^/]*\.py$|_test\.(py|go)$|\.(test|spec)\.[cm]?[jt]sx?$|(^|\/)conftest\.py$/;

const isTestPath = (path: string) => TEST_PATH.test(path);

/** The files split into tests and the rest, or why the pull request does not qualify. */
export function splitFiles(
  files: readonly string[],
): { tests: string[]; code: string[] } | { skip: "no_test_change" | "no_code_change" } {
  const tests = files.filter(isTestPath);
  const code = files.filter((path) => !isTestPath(path));
  if (tests.length === 0) return { skip: "no_test_change" };
  if (code.length === 0) return { skip: "no_code_change" };
  return { tests, code };
}

/** SWE-bench's instance ids: OWNER__REPO-NUMBER. */
export const instanceId = (owner: string, repo: string, pull: number) => `${owner}__${repo}-${pull}`;
