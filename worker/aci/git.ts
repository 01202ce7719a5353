/**
 * The base commit and the submission diff. The diff is staged into a throwaway index (the agent's own
 * index stays as it was), written to a file under .git and read back byte-exact, so no output cap can
 * cut a patch short. New files are taken as the worker's change takes them (worker/run/prepare/workspace-tree.ts):
 * unless the repository's .gitignore or an artefact rule (artefacts.ts) ignores them, so a repository
 * without a .gitignore does not submit its `__pycache__/`.
 */

import type { Sandbox } from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";
import { artefactRules } from "./artefacts.js";
import { shellQuote } from "./paths.js";

/** Config for every git command we run: no pager, colour, external diff or ownership refusal. */
const git =
  "git -c safe.directory='*' -c gc.auto=0 -c core.pager=cat -c color.ui=false -c core.quotepath=false";
/** A fixed identity for the base commit of a directory that was not a repository; never stored in config. */
const identity = "-c user.name=agent-fix -c user.email=agent-fix@localhost -c commit.gpgsign=false";
const patchFile = ".git/agent-fix-submission.patch";
/** The base commit's tracked paths (NUL-separated), and the artefact rules that apply to them. */
const trackedFile = ".git/agent-fix-tracked";
const artefactsFile = ".git/agent-fix-artefacts.gitignore";
/** Larger than any repository's list of tracked paths (the kernel's is ~5 MB). */
const MAX_TRACKED_BYTES = 200_000_000;

/** Every artefact rule's pattern as shell words: the base commit of a directory tracks none of them. */
const allArtefacts = artefactRules([])
  .map((rule) => shellQuote(rule.pattern))
  .join(" ");

/** Prints HEAD's commit when the working directory is in a repository with one (exit 1 when not). */
export const readHead = `${git} rev-parse --verify -q HEAD`;

async function run(sandbox: Sandbox, command: string, timeoutMs: number) {
  const result = await sandbox.exec(`( ${command} )`, { cwd: sandbox.workdir, timeoutMs });
  if (result.exitCode !== 0 || result.timedOut) {
    throw new SandboxError(`git failed in the sandbox: ${command}\n${result.output.trim().slice(-2000)}`, {
      code: "git_failed",
      retryable: false,
      hint: "The sandbox needs git and a writable repository directory.",
    });
  }
  return result.output.trim();
}

/**
 * Returns the commit the sandbox starts from. A directory that is not the root of a git repository
 * (or a repository without commits) gets one: init, add everything but artefacts (artefacts.ts), commit
 * with a fixed identity.
 */
export async function recordBaseCommit(sandbox: Sandbox, timeoutMs: number): Promise<string> {
  const root = shellQuote(sandbox.workdir);
  const head = await run(
    sandbox,
    `top=$(${git} rev-parse --show-toplevel 2>/dev/null); ` +
      `if [ "$top" = "$(cd ${root} && pwd -P)" ] && ${git} rev-parse --verify -q HEAD >/dev/null; then ${git} rev-parse HEAD; ` +
      `else [ "$top" = "$(cd ${root} && pwd -P)" ] || ${git} init -q . && ` +
      // Artefacts a directory holds (a __pycache__ of an earlier run) stay out: tracked, they would count.
      `excludes=$(mktemp) && printf '%s\\n' ${allArtefacts} > "$excludes" && ` +
      `${git} -c core.excludesFile="$excludes" add -A . && rm -f "$excludes" && ` +
      `${git} ${identity} commit -q --allow-empty --no-verify -m 'agent-fix: base' && ${git} rev-parse HEAD; fi`,
    timeoutMs,
  );
  const commit = head.split("\n").at(-1) ?? "";
  if (!/^[0-9a-f]{40,64}$/.test(commit)) {
    throw new SandboxError(`could not read the base commit of the repository (got "${commit}")`, {
      code: "git_failed",
      retryable: false,
    });
  }
  return commit;
}

/**
 * Writes the artefact rules that apply to `base` (those covering none of its tracked paths) as an
 * excludes file; returns its absolute path.
 */
async function writeArtefactExcludes(sandbox: Sandbox, base: string, timeoutMs: number): Promise<string> {
  await run(sandbox, `${git} ls-tree -r -z --name-only --full-tree ${base} > ${trackedFile}`, timeoutMs);
  const listing = await sandbox.readFile(trackedFile, { maxBytes: MAX_TRACKED_BYTES });
  const rules = artefactRules(listing.toString("utf8").split("\0").filter(Boolean));
  await sandbox.writeFile(artefactsFile, `${rules.map((rule) => rule.pattern).join("\n")}\n`);
  return `${sandbox.workdir}/${artefactsFile}`;
}

/**
 * The diff of the working tree against `base`: the paths `base` tracks, and new files unless the
 * repository's .gitignore or an artefact rule ignores them (whatever the agent staged).
 */
export async function workingTreeDiff(sandbox: Sandbox, base: string, timeoutMs: number): Promise<string> {
  const excludes = await writeArtefactExcludes(sandbox, base, timeoutMs);
  await run(
    sandbox,
    `index=$(mktemp) && { cp "$(${git} rev-parse --git-dir)/index" "$index" 2>/dev/null || rm -f "$index"; } && ` +
      // The base's entries (with the agent's index's stat data where they match: no file is hashed again),
      // not what the agent staged: an artefact it added (`git add -A` without a .gitignore) stays out.
      `export GIT_INDEX_FILE="$index" && { ${git} read-tree -m ${base} 2>/dev/null || ${git} read-tree ${base}; } && ` +
      `${git} -c core.excludesFile=${shellQuote(excludes)} add -A . && ` +
      `${git} diff --cached --binary --no-color --no-ext-diff --no-textconv --src-prefix=a/ --dst-prefix=b/ ${base} > ${patchFile}; ` +
      `status=$?; rm -f "$index"; exit $status`,
    timeoutMs,
  );
  const patch = await sandbox.readFile(patchFile, { maxBytes: 50_000_000 });
  return patch.toString("utf8");
}
