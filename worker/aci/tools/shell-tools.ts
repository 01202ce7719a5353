/** `bash` runs a command in the sandbox's persistent shell; `submit` ends the episode with the diff. */
import { z } from "zod";
import type { ToolContext, ToolResult } from "../../../src/shared/contracts.js";
import { SandboxError } from "../../../src/shared/errors.js";
import { workingTreeDiff } from "../git.js";
import { interactiveCommandProblem } from "../interactive.js";
import { shellQuote } from "../paths.js";
import { type AciRuntime, type AciTool, defineTool, observation, stringArg } from "../tool.js";

const noOutput = "Your command ran successfully and did not produce any output.";

/** Variables and directory every session starts with; sent again when the shell had to restart. */
export function sessionSetup(root: string): string {
  const refuseEditor = `echo 'agent-fix: no interactive editor is available; pass the text on the command line (e.g. git commit -m MESSAGE).' >&2; false`;
  return [
    "export PAGER=cat GIT_PAGER=cat MANPAGER=cat SYSTEMD_PAGER=cat LESS=-FRX TERM=dumb",
    `export EDITOR=${shellQuote(refuseEditor)} VISUAL=${shellQuote(refuseEditor)} GIT_EDITOR=${shellQuote(refuseEditor)}`,
    "export GIT_TERMINAL_PROMPT=0 PIP_NO_INPUT=1 DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1",
    `cd ${shellQuote(root)}`,
  ].join("; ");
}

/** Reads the shell's directory after a command (a `cd` persists in the session). */
async function syncWorkingDir(runtime: AciRuntime, context: ToolContext): Promise<void> {
  const result = await context.sandbox.exec("pwd", { timeoutMs: runtime.config.toolTimeoutMs });
  const dir = result.output.trim().split("\n").at(-1);
  if (result.exitCode === 0 && dir?.startsWith("/")) context.state.workingDir = dir;
}

export function shellTools(runtime: AciRuntime): AciTool[] {
  const timeoutSeconds = Math.round(runtime.config.commandTimeoutMs / 1000);
  const editTools = runtime.config.bundle === "editor" ? "str_replace, insert or create" : "the edit command";
  const bash = defineTool({
    name: "bash",
    doc: `Runs a bash command in the repository's shell; the current directory and exported variables persist. No terminal, no input: interactive programs (editors, pagers, REPLs without a script) are refused. A command is killed after ${timeoutSeconds} seconds.`,
    parameters: z.object({ command: stringArg("the command to run").min(1) }),
    run: async (args, context) => {
      const problem = interactiveCommandProblem(args.command, editTools);
      if (problem) return observation(problem);
      const result = await context.sandbox.exec(args.command, {
        timeoutMs: runtime.config.commandTimeoutMs,
        ...(context.signal ? { signal: context.signal } : {}),
      });
      const notes: string[] = [];
      if (result.timedOut) {
        notes.push(
          `The command ran longer than ${timeoutSeconds} seconds and was killed. Run long commands in the background (e.g. \`cmd > out.log 2>&1 &\`, then read out.log), or with a smaller scope (fewer tests or files).`,
        );
      } else if (result.oomKilled) {
        notes.push("The command ran out of memory and was killed. Run it with a smaller scope.");
      }
      if (result.sessionRestarted) {
        await context.sandbox.exec(sessionSetup(runtime.root), { timeoutMs: runtime.config.toolTimeoutMs });
        notes.push("The shell was restarted: the current directory and variables were reset.");
      }
      await syncWorkingDir(runtime, context);
      const output = result.output.replace(/\n+$/, "");
      if (output === "" && notes.length === 0) {
        return observation(
          result.exitCode === 0
            ? noOutput
            : `The command failed with exit status ${result.exitCode} and did not produce any output.`,
        );
      }
      return observation([output, ...notes].filter((part) => part !== "").join("\n"));
    },
  });
  const submit = defineTool({
    name: "submit",
    doc: "Submits your current changes (the diff of the repository against the commit you started from, new files included) and ends the session.",
    parameters: z.object({}),
    run: (_args, context) => runSubmit(runtime, context),
  });
  return [bash, submit];
}

/** The line of git's output that says what went wrong. */
function gitReason(message: string): string {
  const lines = message.split("\n").slice(1);
  return lines.find((line) => /^(fatal|error):/.test(line)) ?? lines.at(-1) ?? "";
}

async function runSubmit(runtime: AciRuntime, context: ToolContext): Promise<ToolResult> {
  let patch: string;
  try {
    patch = await workingTreeDiff(context.sandbox, runtime.baseCommit, runtime.config.toolTimeoutMs);
  } catch (error) {
    if (!(error instanceof SandboxError) || error.code !== "git_failed") throw error;
    // e.g. the agent removed .git: the episode goes on, so the agent can repair it.
    return observation(
      `Error: your changes could not be turned into a diff, so nothing was submitted. ${gitReason(error.message)}\n` +
        "The repository's git data (.git) must stay intact; repair or restore it, then submit again.",
    );
  }
  const files = (patch.match(/^diff --git /gm) ?? []).length;
  return {
    observation:
      patch === ""
        ? "Submitted: no changes (the repository is the same as the commit you started from)."
        : `Submitted: ${files} file${files === 1 ? "" : "s"} changed.`,
    submission: patch,
  };
}
