/**
 * The base commit and the submission diff. The diff is staged into a throwaway index (the agent's own
 * index stays as it was), written to a file under .git and read back byte-exact, so no output cap can
 * cut a patch short.
 */

import type { Sandbox } from "../../src/contracts.js";
import { SandboxError } from "../../src/errors.js";
import { shellQuote } from "./paths.js";

/** Config for every git command we run: no pager, colour, external diff or ownership refusal. */
const git =
  "git -c safe.directory='*' -c gc.auto=0 -c core.pager=cat -c color.ui=false -c core.quotepath=false";
/** A fixed identity for the base commit of a directory that was not a repository; never stored in config. */
const identity = "-c user.name=agent-fix -c user.email=agent-fix@localhost -c commit.gpgsign=false";
const patchFile = ".git/agent-fix-submission.patch";

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
 * (or a repository without commits) gets one: init, add everything, commit with a fixed identity.
 */
export async function recordBaseCommit(sandbox: Sandbox, timeoutMs: number): Promise<string> {
  const root = shellQuote(sandbox.workdir);
  const head = await run(
    sandbox,
    `top=$(${git} rev-parse --show-toplevel 2>/dev/null); ` +
      `if [ "$top" = "$(cd ${root} && pwd -P)" ] && ${git} rev-parse --verify -q HEAD >/dev/null; then ${git} rev-parse HEAD; ` +
      `else [ "$top" = "$(cd ${root} && pwd -P)" ] || ${git} init -q . && ${git} add -A . && ` +
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

/** The diff of the working tree (new files included, ignored files excluded) against `base`. */
export async function workingTreeDiff(sandbox: Sandbox, base: string, timeoutMs: number): Promise<string> {
  await run(
    sandbox,
    `index=$(mktemp) && { cp "$(${git} rev-parse --git-dir)/index" "$index" 2>/dev/null || rm -f "$index"; } && ` +
      `export GIT_INDEX_FILE="$index" && ${git} add -A . && ` +
      `${git} diff --cached --binary --no-color --no-ext-diff --no-textconv --src-prefix=a/ --dst-prefix=b/ ${base} > ${patchFile}; ` +
      `status=$?; rm -f "$index"; exit $status`,
    timeoutMs,
  );
  const patch = await sandbox.readFile(patchFile, { maxBytes: 50_000_000 });
  return patch.toString("utf8");
}
