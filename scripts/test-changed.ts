/**
 * The fast loop: `npm run test:changed` runs the tests a change touches, in one vitest run.
 *
 * The change is every file that differs from where the branch left main (`git merge-base HEAD main`,
 * or `--since REF`), committed or not, and the files git does not track yet. The tests are:
 *   - the unit and integration files that import a changed file, directly or through others (vitest's
 *     own module graph: `related`);
 *   - the e2e and fault files that changed, or whose own imports name a changed file. Not those that
 *     reach it only through the stack (test/support/stack.ts imports the whole product, so every e2e
 *     file would be chosen by any change): `npx vitest run --changed main` runs those too.
 * It prints what it chose and what the files took last time, then runs them longest first (`--list`:
 * prints only). Other arguments after `--` go to vitest (`-t NAME`, `--reporter verbose`).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { createVitest, parseCLI } from "vitest/node";
import { fileDuration } from "../test/support/longest-first.js";

const root = resolve(import.meta.dirname, "..");
const git = (...args: string[]) =>
  execFileSync("git", args, { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean);

const argv = process.argv.slice(2);
const sinceAt = argv.indexOf("--since");
if (sinceAt >= 0 && !argv[sinceAt + 1])
  throw new Error("--since needs a git revision: npm run test:changed -- --since HEAD~3");
const since = sinceAt >= 0 ? (argv.splice(sinceAt, 2)[1] as string) : git("merge-base", "HEAD", "main")[0];
if (!since)
  throw new Error("no merge base with main: name the revision, npm run test:changed -- --since REF");

const changed = new Set(
  [...git("diff", "--name-only", since), ...git("ls-files", "--others", "--exclude-standard")]
    .map((path) => resolve(root, path))
    .filter((path) => existsSync(path)),
);
if (changed.size === 0) {
  console.log(`test:changed: nothing differs from ${since}; nothing to run.`);
  process.exit(0);
}

/** The files an e2e file names in its own imports (relative ones, `.js` as the `.ts` it is). */
function ownImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)];
  return specifiers.map((m) => resolve(dirname(file), (m[1] as string).replace(/\.js$/, ".ts")));
}

const listAt = argv.indexOf("--list");
if (listAt >= 0) argv.splice(listAt, 1);

const { filter, options } = parseCLI(["vitest", ...argv]);
const vitest = await createVitest("test", {
  ...options,
  run: true,
  watch: false,
  related: [...changed],
  passWithNoTests: true,
});
// The reporters and the cache of test files, as `vitest run` starts them.
await vitest.standalone();
const relevant = await vitest.getRelevantTestSpecifications(filter);
const chosen = relevant.filter(
  (spec) =>
    !spec.project.name.startsWith("e2e") ||
    changed.has(spec.moduleId) ||
    ownImports(spec.moduleId).some((path) => changed.has(path)),
);
const leftOut = relevant.length - chosen.length;
const byProject = new Map<string, number>();
for (const spec of chosen) byProject.set(spec.project.name, (byProject.get(spec.project.name) ?? 0) + 1);
const lastTime = chosen.reduce((sum, spec) => sum + fileDuration(vitest, spec), 0);
console.log(
  `test:changed: ${changed.size} files differ from ${since.slice(0, 12)}; ` +
    `${chosen.length} test files (${[...byProject].map(([p, n]) => `${p} ${n}`).join(", ") || "none"}), ` +
    `${Math.round(lastTime / 1000)} s of file time last run, on ${vitest.config.maxWorkers} workers; ` +
    `${leftOut} e2e files reach a change only through the stack (npx vitest run --changed ${since.slice(0, 12)} runs them)`,
);
for (const spec of chosen) console.log(`  ${relative(root, spec.moduleId)}`);
if (listAt >= 0) {
  await vitest.close();
  process.exit(0);
}
const result = await vitest.runTestSpecifications(chosen, false);
await vitest.close();
const failed = result.testModules.some((m) => !m.ok()) || result.unhandledErrors.length > 0;
process.exit(failed ? 1 : 0);
