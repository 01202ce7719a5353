/**
 * `agent-fix run` chooses its Docker image as the worker does, from the local checkout: a real Go module
 * (github.com/google/uuid, fetched from the Go module proxy at test time) runs in the rich image and its
 * tests run there; `--image` wins; an image the engine lacks is refused with how to build it. `agent-fix
 * eval` chooses the same way for an instance that names no image.
 */
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SANDBOX_IMAGE, SANDBOX_RICH_IMAGE } from "../../../../sandbox/version.js";
import type { Trajectory } from "../../../../src/shared/contracts.js";
import { gitIn, readEvalResults, cli as runCli } from "../../../support/eval-repo.js";
import { goModule } from "../../../support/registry-project.js";
import { turn } from "../../../support/replay-turns.js";
import { requireSandboxImage } from "../../../support/services.js";

const cli = (...args: string[]) => runCli(args);
const root = fileURLToPath(new URL("../../../../", import.meta.url));
const calcRepo = join(root, "test/fixtures/agent/calc-repo");
const GO_MODULE = "github.com/google/uuid";
const GO_VERSION = "v1.6.0";

/** The grading's test, added by the instance's test_patch. */
const NEW_TEST = [
  "package uuid",
  "",
  'import "testing"',
  "",
  "func TestAgentFix(t *testing.T) {",
  '\tif NewString() == "" {',
  '\t\tt.Fatal("no UUID")',
  "\t}",
  "}",
];
const NEW_TEST_PATCH = [
  "diff --git a/agentfix_test.go b/agentfix_test.go",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/agentfix_test.go",
  `@@ -0,0 +1,${NEW_TEST.length} @@`,
  ...NEW_TEST.map((line) => `+${line}`),
  "",
].join("\n");

/** The module from the Go module proxy (test/support/registry-project.ts), written out: its directory. */
async function fetchGoModule(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "cli-go-"));
  for (const [path, content] of Object.entries(await goModule(GO_MODULE, GO_VERSION))) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

/** A replayed episode: look at the toolchain, change one file, submit and confirm. */
async function replayFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "cli-replay-"));
  const file = join(dir, "episode.jsonl");
  const turns = [
    turn("Which toolchain is here?", "bash", { command: "go version && command -v python3" }),
    turn("Document the package.", "bash", { command: "echo '// Checked by agent-fix.' >> doc.go" }),
    turn("Done.", "submit"),
    turn("Reviewed: the change is the one line.", "submit"),
  ];
  await writeFile(file, `${turns.join("\n")}\n`);
  return `replay:${file}`;
}

async function trajectoryIn(out: string): Promise<Trajectory> {
  const traj = (await readdir(out)).find((file) => file.endsWith(".traj"));
  return JSON.parse(await readFile(join(out, traj!), "utf8")) as Trajectory;
}

const ready = (await requireSandboxImage(SANDBOX_RICH_IMAGE)) && (await requireSandboxImage(SANDBOX_IMAGE));

// Each run starts a CLI process and a sandbox: tens of seconds on a busy machine. The tests share nothing
// (each its own copy of the module, its own output directory and sandboxes), so they run side by side:
// the runs' sandbox and CLI starts overlap the eval's, which bounds the file (its baseline, gate and
// grading each build and test the module in a fresh sandbox). Side by side at load 40, the eval took
// over 300 s once: the limit is twice that.
describe
  .runIf(ready)
  .concurrent("agent-fix run chooses the image as the worker does", { timeout: 600_000 }, () => {
    it("runs a Go module from the Go proxy in the rich image, where its tests pass", async () => {
      const module = await fetchGoModule();
      const out = await mkdtemp(join(tmpdir(), "cli-out-"));
      const result = await cli(
        ...["run", "--repo", module, "--issue", "Document the package", "--model", await replayFile()],
        ...["--sandbox", "docker", "--test", "go test ./...", "--out", out],
      );
      expect(result.stderr).not.toContain("Error");
      expect(result.stdout).toContain(
        `image: ${SANDBOX_RICH_IMAGE} (the first of the operator's images with what the checkout needs (go))`,
      );
      expect(result.code).toBe(0);
      const trajectory = await trajectoryIn(out);
      expect(trajectory.info.sandbox_image).toBe(SANDBOX_RICH_IMAGE);
      expect(trajectory.info.sandbox_image_id).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(trajectory.info.kept_environment).toBeNull();
      expect(trajectory.trajectory[0]!.observation).toMatch(/^go version go1\.\d+/);
      expect(trajectory.info.gate).toHaveLength(1);
      expect(trajectory.info.gate[0]!.output).toContain(`ok  \t${GO_MODULE}`);
      expect(trajectory.info.submission).toContain("+// Checked by agent-fix.");
      const traj = (await readdir(out)).find((file) => file.endsWith(".traj"))!;
      const shown = await cli("inspect", join(out, traj));
      expect(shown.stdout).toContain(
        `sandbox       ${SANDBOX_RICH_IMAGE} (${trajectory.info.sandbox_image_id!.slice(0, 19)})`,
      );
    });

    it("takes --image over the choice, and refuses a Go no image has before any sandbox", async () => {
      const module = await fetchGoModule();
      const out = await mkdtemp(join(tmpdir(), "cli-out-"));
      const slim = await cli(
        ...["run", "--repo", module, "--issue", "Document the package", "--model", await replayFile()],
        ...["--sandbox", "docker", "--image", SANDBOX_IMAGE, "--out", out],
      );
      expect(slim.stdout).toContain(`image: ${SANDBOX_IMAGE} (named by --image)`);
      const trajectory = await trajectoryIn(out);
      expect(trajectory.info.sandbox_image).toBe(SANDBOX_IMAGE);
      // The slim image has no Go: the first command fails there.
      expect(trajectory.trajectory[0]!.observation).toContain("go: command not found");

      // A Go no image has, as go.mod declares it: refused before any sandbox, saying what would do.
      await writeFile(join(module, "go.mod"), `module ${GO_MODULE}\n\ngo 1.99\n`);
      const tooNew = await cli(
        ...["run", "--repo", module, "--issue", "x", "--model", await replayFile(), "--sandbox", "docker"],
      );
      expect(tooNew.code).toBe(2);
      expect(tooNew.stderr).toContain("Or name an image that has it with --image.");
      expect(tooNew.stderr).toContain("1.99 (go.mod line 3");
      expect(tooNew.stderr).toContain(`\`${SANDBOX_RICH_IMAGE}\` (go 1.24`);
      await writeFile(join(module, "go.mod"), `module ${GO_MODULE}\n\ngo 1.21\n`);
      const declared = await cli(
        ...["run", "--repo", module, "--issue", "x", "--model", await replayFile(), "--sandbox", "docker"],
        ...["--out", await mkdtemp(join(tmpdir(), "cli-out-"))],
      );
      expect(declared.stdout).toContain(
        `image: ${SANDBOX_RICH_IMAGE} (the toolchain versions the checkout declares:\n- go 1.21 (go.mod line 3 (\`go\`)): \`${SANDBOX_RICH_IMAGE}\` has 1.24`,
      );
    });

    it("refuses an image the engine lacks with how to build it, and --image on the local sandbox", async () => {
      const missing = `${SANDBOX_RICH_IMAGE.split(":")[0]}:0.0.0-missing`;
      const refused = await cli(
        ...["run", "--repo", calcRepo, "--issue", "x", "--model", await replayFile()],
        ...["--sandbox", "docker", "--image", missing],
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`the image ${missing} is not on this Docker engine`);
      expect(refused.stderr).toContain("npm run sandbox:image:rich");

      const local = await cli(
        ...["run", "--repo", calcRepo, "--issue", "x", "--model", await replayFile()],
        ...["--sandbox", "local", "--image", SANDBOX_IMAGE],
      );
      expect(local.code).toBe(2);
      expect(local.stderr).toContain("the local sandbox runs on this host, in no image");
    });

    it("eval runs an instance naming no image in the one its checkout calls for, and grades its Go tests", async () => {
      const module = await fetchGoModule();
      const git = gitIn(module);
      await git("init", "-q");
      await git("add", "-A");
      await git("commit", "-q", "-m", "uuid");
      const base = (await git("rev-parse", "HEAD")).trim();
      const dir = await mkdtemp(join(tmpdir(), "cli-eval-"));
      await mkdir(join(dir, "replays"));
      const replay = (await readFile((await replayFile()).slice("replay:".length), "utf8")).trim();
      await writeFile(join(dir, "replays", "uuid-doc.jsonl"), `${replay}\n`);
      const instance = {
        instance_id: "uuid-doc",
        repo: module,
        base_commit: base,
        problem_statement: "Document the package",
        test_patch: NEW_TEST_PATCH,
        FAIL_TO_PASS: ["TestAgentFix"],
        PASS_TO_PASS: ["TestNil"],
        setup: [],
      };
      await writeFile(join(dir, "instances.jsonl"), `${JSON.stringify(instance)}\n`);
      const out = join(dir, "out");
      const result = await cli(
        ...["eval", join(dir, "instances.jsonl"), "--model", `replay:${join(dir, "replays")}`, "--out", out],
      );
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const [graded] = await readEvalResults(out);
      expect(graded?.grade).toEqual({
        resolved: true,
        FAIL_TO_PASS: { passed: ["TestAgentFix"], failed: [] },
        PASS_TO_PASS: { passed: ["TestNil"], failed: [] },
      });
      const trajectory = JSON.parse(await readFile(graded!.trajectory!, "utf8")) as Trajectory;
      expect(trajectory.info.sandbox_image).toBe(SANDBOX_RICH_IMAGE);
      expect(trajectory.trajectory[0]!.observation).toMatch(/^go version go1\.\d+/);
    });
  });
