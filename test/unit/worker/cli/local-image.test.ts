/**
 * The CLI's image choice over real checkouts in temp directories: the worker's choice functions under
 * the config's `repository:` policy, from the files on disk.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SANDBOX_IMAGE, SANDBOX_RICH_IMAGE } from "../../../../sandbox/version.js";
import { AgentFixError } from "../../../../src/shared/errors.js";
import { loadConfig } from "../../../../worker/agent/config-file.js";
import { chooseLocalImage } from "../../../../worker/cli/local-image.js";

const { repository: policy } = await loadConfig();

async function checkout(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "local-image-"));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const choose = async (files: Record<string, string>, override?: string) =>
  chooseLocalImage({
    root: await checkout(files),
    name: "repo",
    policy,
    defaultImage: SANDBOX_IMAGE,
    override,
  });

const GO = { "go.mod": "module example.com/m\n\ngo 1.22\n", "m_test.go": "package m\n" };
const PYTHON = { "pyproject.toml": '[project]\nname = "m"\n', "tests/test_m.py": "def test_m(): pass\n" };

describe("agent-fix's image choice on a local checkout", () => {
  it("takes the rich image for a Go module, the default for Python, --image over both", async () => {
    const go = await choose(GO);
    expect(go).toEqual({ image: SANDBOX_RICH_IMAGE, reason: expect.stringContaining("the go toolchain") });
    expect(await choose(PYTHON)).toEqual({ image: SANDBOX_IMAGE, reason: "the default image" });
    expect(await choose(GO, "my-image:1")).toEqual({ image: "my-image:1", reason: "named by --image" });
  });

  it("does not detect what lies in an artefact directory (node_modules, .venv)", async () => {
    const vendored = Object.fromEntries(
      Object.entries(GO).map(([path, text]) => [`node_modules/x/${path}`, text]),
    );
    expect(await choose({ ...PYTHON, ...vendored })).toMatchObject({ image: SANDBOX_IMAGE });
  });

  it("follows the checkout's agent-fix.yml (its _extends left out) and refuses an image the policy does not allow", async () => {
    const named = await choose({
      ...GO,
      ".github/agent-fix.yml": `_extends: .github\nsandbox:\n  image: ${SANDBOX_IMAGE}\ntest:\n  command: go test ./...\n`,
    });
    expect(named).toEqual({ image: SANDBOX_IMAGE, reason: "named in .github/agent-fix.yml" });
    const refused = await choose({ ".github/agent-fix.yml": "sandbox:\n  image: evil/image:1\n" }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AgentFixError);
    expect((refused as AgentFixError).code).toBe("repo_image_not_allowed");
    expect((refused as AgentFixError).message).toContain("evil/image:1");
  });

  it("sets aside a devcontainer image the policy does not allow, saying so, and chooses as without it", async () => {
    const devcontainer = {
      ".devcontainer/devcontainer.json":
        '{ // Codespaces\n "image": "mcr.microsoft.com/devcontainers/go:1" }\n',
    };
    const go = await choose({ ...GO, ...devcontainer });
    expect(go).toMatchObject({ image: SANDBOX_RICH_IMAGE });
    expect(go.reason).toContain("The devcontainer's image mcr.microsoft.com/devcontainers/go:1");
    expect(go.reason).toContain(`ran in \`${SANDBOX_RICH_IMAGE}\` instead`);
    const allowed = await choose({
      ...PYTHON,
      ".devcontainer/devcontainer.json": `{ "image": "${SANDBOX_RICH_IMAGE}" }`,
    });
    expect(allowed).toEqual({
      image: SANDBOX_RICH_IMAGE,
      reason: "named in .devcontainer/devcontainer.json",
    });
  });
});
