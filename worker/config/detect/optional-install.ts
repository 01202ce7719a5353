/**
 * A detected setup step that installs only optional extras (a project's dev or test extra, a dev
 * requirements file): tried as written and, when it fails, replaced by what the tests need (the project
 * itself, then the extra's or file's requirements one at a time, those that fail skipped), so that one
 * tool that cannot be installed (a linter pinned to a release that does not build) does not stop the run.
 *
 * It is data, so that the run can say which step failed and what it installed instead
 * (worker/run/prepare/setup.ts). `optionalCommand` writes the same steps as one shell command: that is the
 * command the part's `setup` lists, and so the one the status comment's `.github/agent-fix.yml` snippet
 * shows, which does the same when committed (without the note), and which keys the kept environment.
 */

export interface OptionalInstall {
  /** The install as written, e.g. `.venv/bin/python -m pip install -e ".[dev]"`. */
  install: string;
  /** What it installs, for people: "the `dev` extra", "requirements-dev.txt". */
  what: string;
  /** Run in order when `install` failed; each must succeed (the project itself). */
  instead: string[];
  /** Then each requirement on its own: one that fails is skipped, and named. */
  each: RequirementInstall[];
}

export interface RequirementInstall {
  /** The requirement as the file or the extra writes it, for people. */
  requirement: string;
  command: string;
}

/** The step as one shell command: the install, or else the same fallback the run takes. */
export function optionalCommand(step: OptionalInstall): string {
  const each = step.each.length ? [`{ ${[...step.each.map((e) => e.command), "true"].join("; ")}; }`] : [];
  const fallback = [...step.instead, ...each];
  if (fallback.length === 0) return `${step.install} || true`;
  return `${step.install} || ${fallback.length === 1 ? fallback[0] : `(${fallback.join(" && ")})`}`;
}

/** A detected setup command as the run takes it: with its fallback when it is an optional install. */
export interface DetectedSetupStep {
  command: string;
  optional?: OptionalInstall;
}

/**
 * The detection's setup commands (`detection.setup`, each run from the repository root) with the
 * optional installs among them. A part's command appears in `detection.setup` behind whatever the
 * detection puts before it to run it in the part's directory (`cd dir && `): the same goes before the
 * install and each command of its fallback. A command whose part's text cannot be matched is a plain
 * step: its shell form still falls back, only without the note.
 */
export function detectedSetupSteps(detection: {
  parts: readonly { setup: readonly string[]; optional?: readonly OptionalInstall[] | undefined }[];
  setup: readonly string[];
}): DetectedSetupStep[] {
  const inParts = detection.parts.flatMap((part) =>
    part.setup.map((command) => ({
      command,
      optional: part.optional?.find((step) => optionalCommand(step) === command),
    })),
  );
  if (inParts.length !== detection.setup.length) return detection.setup.map((command) => ({ command }));
  return detection.setup.map((command, i) => {
    const own = inParts[i];
    if (!own?.optional || !command.endsWith(own.command)) return { command };
    const prefix = command.slice(0, command.length - own.command.length);
    return { command, optional: withPrefix(own.optional, prefix) };
  });
}

function withPrefix(step: OptionalInstall, prefix: string): OptionalInstall {
  return {
    install: prefix + step.install,
    what: step.what,
    instead: step.instead.map((command) => prefix + command),
    each: step.each.map((e) => ({ requirement: e.requirement, command: prefix + e.command })),
  };
}
