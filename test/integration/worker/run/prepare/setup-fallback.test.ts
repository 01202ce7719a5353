import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalSandboxProvider } from "../../../../../sandbox/local.js";
import { detectedSetupSteps } from "../../../../../worker/config/detect/optional-install.js";
import { detectedSnippet } from "../../../../../worker/config/detect/report.js";
import { operatorTree } from "../../../../../worker/run/checkout/trusted-tree.js";
import { prepareTree } from "../../../../../worker/run/prepare/prepare-tree.js";
import { RunSandboxes } from "../../../../../worker/run/prepare/run-sandboxes.js";
import { fallbackNote } from "../../../../../worker/run/prepare/setup.js";
import { commitAll } from "../../../../support/committed-repo.js";
import { detectDirectory } from "../../../../support/detect-fixture.js";

// Detected setup through prepareTree (the run's prepare step) over the local driver, on a real layout
// (test/fixtures/detect/python-dev-extra: a `dev` extra that names a flake8 release that does not
// exist). pip is a stand-in at .venv/bin/python that logs what it is asked and fails for the patterns
// of the repository's `pip-fails` file: the venv step is `true` so that it stays. test/e2e runs real pip.
const FIXTURE = join(import.meta.dirname, "../../../../fixtures/detect/python-dev-extra");
const FAKE_PYTHON = [
  "#!/bin/sh",
  "shift 3",
  'echo "$*" >> pip.log',
  'while read -r pattern; do case "$*" in *"$pattern"*) echo "ERROR: No matching distribution found for $*" >&2; exit 1;; esac; done < pip-fails',
  'echo "Successfully installed $*"',
  "",
].join("\n");
const PIP = ".venv/bin/python -m pip install";

describe("detected setup: optional installs fall back, a failing step says it was detected", () => {
  const provider = new LocalSandboxProvider({ warn: () => {} });
  const sandboxes = new RunSandboxes(provider, { jobId: "setup-fallback-test" });
  const roots: string[] = [];
  afterAll(async () => {
    await sandboxes.disposeAll();
    await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
  });

  /** The fixture with the stand-in pip, prepared with its detected setup (the venv step kept out). */
  async function prepareWith(fails: string[], configured = false, before: string[] = []) {
    const root = await mkdtemp(join(tmpdir(), "af-setup-fallback-"));
    roots.push(root);
    const repo = join(root, "repo");
    await cp(FIXTURE, repo, { recursive: true });
    await writeFile(join(repo, "pip-fails"), fails.map((f) => `${f}\n`).join(""));
    const detection = await detectDirectory(repo);
    await mkdir(join(repo, ".venv", "bin"), { recursive: true });
    await writeFile(join(repo, ".venv", "bin", "python"), FAKE_PYTHON);
    await chmod(join(repo, ".venv", "bin", "python"), 0o755);
    const steps = detectedSetupSteps(detection).map((step, i) => (i === 0 ? { command: "true" } : step));
    const prepare = prepareTree({
      sandboxes,
      trusted: operatorTree(repo, commitAll(repo, "fixture")),
      root,
      setup: {
        commands: [...before, ...steps.map((step) => step.command)],
        network: false,
        timeoutMs: 30_000,
        // A file naming setup commands: the same commands, not detected, so nothing falls back.
        ...(configured ? {} : { detected: { steps, snippet: detectedSnippet(detection) } }),
      },
      secrets: {},
    });
    return { prepare, snippet: detectedSnippet(detection) };
  }

  it("an optional extra that fails: the project alone, then each requirement; the rest of setup runs", async () => {
    const { prepare } = await prepareWith(["[dev]", "flake8"]);
    const prepared = await prepare;
    expect((await readFile(join(prepared.dir, "pip.log"), "utf8")).trim().split("\n")).toEqual([
      "-e .[dev]",
      "-e .",
      "pytest>=7",
      "pytest-mock",
      'tomli; python_version < "3.11"',
      "flake8==0.0.0",
      "pytest",
    ]);
    expect(prepared.fallbacks).toEqual([
      {
        step: 2,
        steps: 3,
        install: `${PIP} -e ".[dev]"`,
        what: "the `dev` extra",
        why: "exited 1",
        tail: "ERROR: No matching distribution found for -e .[dev]",
        instead: [`${PIP} -e .`],
        installed: ["pytest>=7", "pytest-mock", 'tomli; python_version < "3.11"'],
        skipped: ["flake8==0.0.0"],
      },
    ]);
    const note = fallbackNote(prepared.fallbacks?.[0] ?? fail());
    expect(note).toBe(
      [
        `⚠️ Setup step 2 of 3, the optional install of the \`dev\` extra (\`${PIP} -e ".[dev]"\`), exited 1; the run went on with what the tests need instead:`,
        `- \`${PIP} -e .\``,
        '- then the requirements of the `dev` extra, one at a time: installed `pytest>=7`, `pytest-mock`, `tomli; python_version < "3.11"`; not installed `flake8==0.0.0`',
        "",
        "The optional install's last lines:",
        "```",
        "ERROR: No matching distribution found for -e .[dev]",
        "```",
      ].join("\n"),
    );
  });

  it("after commands that run before the detected ones (what provides a toolchain): still detected steps", async () => {
    const { prepare } = await prepareWith(["[dev]"], false, ["echo provided > provided.txt"]);
    const prepared = await prepare;
    expect(await readFile(join(prepared.dir, "provided.txt"), "utf8")).toBe("provided\n");
    expect(prepared.fallbacks?.map((f) => [f.step, f.steps, f.skipped])).toEqual([[3, 4, []]]);
  });

  it("an optional extra that installs: no fallback, nothing to say", async () => {
    const { prepare } = await prepareWith([]);
    const prepared = await prepare;
    expect((await readFile(join(prepared.dir, "pip.log"), "utf8")).trim().split("\n")).toEqual([
      "-e .[dev]",
      "pytest",
    ]);
    expect(prepared.fallbacks).toBeUndefined();
  });

  it("a required step that fails: the detected setup failed at step N, with the snippet to commit", async () => {
    const { prepare, snippet } = await prepareWith(["pytest"]);
    const error = await prepare.catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "setup_failed", fault: "repository" });
    const { message, hint } = error as { message: string; hint: string };
    expect(message).toBe(
      `The setup agent-fix detected failed at step 3 of 3: \`${PIP} pytest\` exited 1. Its last lines:\n\`\`\`\nERROR: No matching distribution found for pytest\n\`\`\`\n`,
    );
    expect(hint).toContain("No .github/agent-fix.yml names setup commands, so agent-fix detected them");
    expect(hint).toContain(`\`\`\`yaml\n${snippet}\n\`\`\``);
    expect(hint).not.toContain("Fix the `setup` commands in .github/agent-fix.yml");
  });

  it("the same commands named by a file: its shell form falls back alone; a failure has today's hint", async () => {
    const { prepare } = await prepareWith(["[dev]", "pytest"], true);
    const error = (await prepare.catch((e: unknown) => e)) as Error & { hint: string };
    // The committed snippet's `||` fell back (no note: nothing knows it did), and setup went on.
    expect(error.message).toBe(
      `Setup command \`${PIP} pytest\` exited 1:\nERROR: No matching distribution found for pytest`,
    );
    expect(error.hint).toBe(
      "Fix the `setup` commands in .github/agent-fix.yml (they run in a Debian container as a non-root user).",
    );
  });

  it("an optional extra whose fallback fails too: both named", async () => {
    const { prepare } = await prepareWith(["-e"]);
    const error = (await prepare.catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(
      `failed at step 2 of 3: \`${PIP} -e ".[dev]"\` (the optional install of the \`dev\` extra) failed, and so did what stands in for it, \`${PIP} -e .\`, which exited 1.`,
    );
  });
});

function fail(): never {
  throw new Error("expected a fallback");
}
