import type { Sandbox } from "../../../src/shared/contracts.js";
import { AgentFixError } from "../../../src/shared/errors.js";
import { fenceFor } from "../../../src/shared/github/left-work.js";
import type { DetectedSetupStep, OptionalInstall } from "../../config/detect/optional-install.js";

/**
 * Setup commands detection wrote, the repository's files naming none: each with its fallback when it
 * installs optional extras, and the `.github/agent-fix.yml` that sets them, for a failure to show.
 */
export interface DetectedSetup {
  /** The commands as detection found them, in order (the same commands as the setup's `commands`). */
  steps: readonly DetectedSetupStep[];
  snippet: string;
}

interface SetupOptions {
  commands: readonly string[];
  /** Set when detection wrote `commands`: optional installs fall back, and a failure says it was detected. */
  detected?: DetectedSetup | undefined;
  /** Operator-configured secrets for this repository (private registries): per-command env only. */
  secrets?: Record<string, string>;
  /** Whether the sandbox was started with network; it is cut either way before this returns. */
  networkWasOn: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** An optional install that failed, and what was installed in its place. */
export interface SetupFallback {
  /** Its place in the setup, from 1, of `steps`. */
  step: number;
  steps: number;
  install: string;
  what: string;
  /** "exited 1", "timed out after 600 s". */
  why: string;
  /** The install's last lines (setup secrets redacted). */
  tail: string;
  /** The commands run instead, each of which succeeded. */
  instead: string[];
  /** The requirements then installed one at a time, and those that could not be. */
  installed: string[];
  skipped: string[];
}

interface SetupResult {
  commands: { command: string; exitCode: number; durationMs: number }[];
  fallbacks: SetupFallback[];
}

/** The last lines of a command's output, for a status comment. */
function tail(output: string, lines = 30): string {
  const all = output.trimEnd().split("\n");
  return all.slice(-lines).join("\n");
}

/**
 * The run's prepare step: the repository's setup commands, with network (unless the repo config
 * turned it off) and the setup secrets. Then the network is cut, whatever happened: the agent never has
 * network or secrets. A detected optional install that fails is replaced by its fallback, and said
 * (`fallbacks`); any other failing command stops the run, naming it.
 */
export async function runSetup(sandbox: Sandbox, options: SetupOptions): Promise<SetupResult> {
  const result: SetupResult = { commands: [], fallbacks: [] };
  const steps = stepsOf(options);
  const run = async (command: string) => {
    const ran = await sandbox.exec(command, {
      timeoutMs: options.timeoutMs,
      env: options.secrets ?? {},
      ...(options.signal ? { signal: options.signal } : {}),
    });
    result.commands.push({ command, exitCode: ran.exitCode, durationMs: ran.durationMs });
    const why = ran.timedOut
      ? `timed out after ${Math.round(options.timeoutMs / 1000)} s`
      : `exited ${ran.exitCode}`;
    return { ...ran, why, tail: redactAll(tail(ran.output), options.secrets) };
  };
  const fail = (
    index: number,
    command: string,
    ran: { why: string; tail: string },
    after?: OptionalInstall,
  ) =>
    options.detected
      ? detectedFailure(index + 1, steps.length, command, ran, options.detected.snippet, after)
      : configuredFailure(command, ran);
  try {
    for (const [index, step] of steps.entries()) {
      const optional = step.optional;
      const ran = await run(optional ? optional.install : step.command);
      if (ran.exitCode === 0) continue;
      if (!optional) throw fail(index, step.command, ran);
      for (const command of optional.instead) {
        const instead = await run(command);
        if (instead.exitCode !== 0) throw fail(index, command, instead, optional);
      }
      const installed: string[] = [];
      const skipped: string[] = [];
      for (const each of optional.each) {
        ((await run(each.command)).exitCode === 0 ? installed : skipped).push(each.requirement);
      }
      result.fallbacks.push({
        step: index + 1,
        steps: steps.length,
        install: optional.install,
        what: optional.what,
        why: ran.why,
        tail: tail(ran.tail, FALLBACK_TAIL_LINES),
        instead: optional.instead,
        installed,
        skipped,
      });
    }
  } finally {
    if (options.networkWasOn) await sandbox.setNetwork(false);
  }
  return result;
}

/**
 * The commands as steps: the detected ones, with their fallbacks, where they end the commands (what
 * provides a declared toolchain may run before them); any command before them is a plain step.
 */
function stepsOf(options: SetupOptions): readonly DetectedSetupStep[] {
  const plain = options.commands.map((command) => ({ command }));
  const detected = options.detected?.steps;
  if (!detected) return plain;
  const offset = options.commands.length - detected.length;
  const ends = offset >= 0 && detected.every((step, i) => step.command === options.commands[offset + i]);
  return ends ? [...plain.slice(0, offset), ...detected] : plain;
}

function configuredFailure(command: string, ran: { why: string; tail: string }): AgentFixError {
  return new AgentFixError(`Setup command \`${command}\` ${ran.why}:\n${ran.tail}`, {
    code: "setup_failed",
    fault: "repository",
    hint: "Fix the `setup` commands in .github/agent-fix.yml (they run in a Debian container as a non-root user).",
  });
}

/** A detected step failed: it says so, and what to commit instead, from the commands that were detected. */
function detectedFailure(
  step: number,
  steps: number,
  command: string,
  ran: { why: string; tail: string },
  snippet: string,
  after: OptionalInstall | undefined,
): AgentFixError {
  const where = after
    ? `at step ${step} of ${steps}: \`${after.install}\` (the optional install of ${after.what}) failed, and so did what stands in for it, \`${command}\`, which ${ran.why}`
    : `at step ${step} of ${steps}: \`${command}\` ${ran.why}`;
  const fence = fenceFor(ran.tail);
  return new AgentFixError(
    // Ends with a line break: the error's code and hint follow the fence, not on its closing line.
    `The setup agent-fix detected failed ${where}. Its last lines:\n${fence}\n${ran.tail}\n${fence}\n`,
    {
      code: "setup_failed",
      fault: "repository",
      hint: [
        "No .github/agent-fix.yml names setup commands, so agent-fix detected them from the repository's files (they run in a Debian container as a non-root user).",
        "Commit .github/agent-fix.yml with setup commands that work, for example the detected ones, edited:",
        "```yaml",
        snippet,
        "```",
      ].join("\n"),
    },
  );
}

const FALLBACK_TAIL_LINES = 10;

const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

/** The status comment's note on an optional install that failed and what stood in for it. */
export function fallbackNote(fallback: SetupFallback): string {
  const fence = fenceFor(fallback.tail);
  const failed = `⚠️ Setup step ${fallback.step} of ${fallback.steps}, the optional install of ${fallback.what} (${code(fallback.install)}), ${fallback.why}`;
  const nothingInstead = fallback.instead.length + fallback.installed.length + fallback.skipped.length === 0;
  const lines = [
    // A requirements file too large to read has no requirements to install one by one.
    nothingInstead
      ? `${failed}; the run went on without it.`
      : `${failed}; the run went on with what the tests need instead:`,
    ...fallback.instead.map((command) => `- ${code(command)}`),
  ];
  if (fallback.installed.length + fallback.skipped.length > 0) {
    const list = (items: string[]) => (items.length ? items.map(code).join(", ") : "none");
    lines.push(
      `- then the requirements of ${fallback.what}, one at a time: installed ${list(fallback.installed)}; not installed ${list(fallback.skipped)}`,
    );
  }
  lines.push("", "The optional install's last lines:", fence, fallback.tail, fence);
  return lines.join("\n");
}

function redactAll(text: string, secrets: Record<string, string> | undefined): string {
  let out = text;
  for (const value of Object.values(secrets ?? {})) if (value.length >= 4) out = out.split(value).join("***");
  return out;
}
