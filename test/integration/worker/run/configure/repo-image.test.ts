/**
 * A repository names its environment (`sandbox.image` in .github/agent-fix.yml, or the `image` of its
 * .devcontainer/devcontainer.json), read from the default branch through the GitHub stand-in's contents
 * API; the operator's `repository.images` decides which are allowed, and a refusal names them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../../../worker/agent/config-file.js";
import type { ContentsApi } from "../../../../../worker/run/configure/contents.js";
import { loadRepoConfig } from "../../../../../worker/run/configure/repo-config.js";
import type { OperatorRules } from "../../../../../worker/run/configure/repo-rules.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { installationApi } from "../../../../support/installation.js";

const TEST = "test:\n  command: go test ./...\n";
const DEVCONTAINER = `{
  // Developers' environment (JSON with comments, a trailing comma)
  "name": "go",
  "image": "mcr.microsoft.com/devcontainers/go:1-1.24-bookworm",
  "customizations": { "vscode": { "extensions": ["golang.go"] } },
}
`;

describe("the image a repository names is one the operator allows", () => {
  let github: GitHubServer;
  let api: ContentsApi;
  let rules: OperatorRules;
  const owner = "octo";
  let repoCount = 0;
  const load = async (files: Record<string, string>, policy: Partial<OperatorRules["policy"]> = {}) => {
    const name = `images-${++repoCount}`;
    await github.addRepo({ owner, name, files: { "README.md": "x\n", ...files } });
    return loadRepoConfig(
      { repo: api, org: null },
      { owner, repo: name, defaultBranch: "main" },
      { ...rules, policy: { ...rules.policy, ...policy } },
    );
  };

  beforeAll(async () => {
    const operator = await loadConfig();
    rules = { defaultMaxSteps: 50, policy: operator.repository, model: operator.model };
    github = await startGitHubServer();
    api = await installationApi<ContentsApi>(github);
  });
  afterAll(async () => {
    await github.stop();
  });

  it("by default only agent-fix's own images: the rich one is taken, a foreign one refused naming the allowed ones", async () => {
    const rich = await load({
      ".github/agent-fix.yml": `${TEST}sandbox:\n  image: agent-fix-sandbox-rich:0.1.0\n`,
    });
    expect(rich.image).toBe("agent-fix-sandbox-rich:0.1.0");
    const error = await load({
      ".github/agent-fix.yml": `${TEST}sandbox:\n  image: ghcr.io/attacker/root-shell:latest\n`,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "repo_image_not_allowed", fault: "config", retryable: false });
    expect((error as Error).message).toBe(
      ".github/agent-fix.yml names the image ghcr.io/attacker/root-shell:latest, which is not one of the images the operator allows (agent-fix-sandbox:*, agent-fix-sandbox-rich:*)",
    );
  });

  it("without one, the operator's default image runs (no image in the loaded config)", async () => {
    const config = await load({ ".github/agent-fix.yml": TEST });
    expect(config.image).toBeUndefined();
  });

  it("a devcontainer.json's image is a hint: one not allowed is set aside with a note, one allowed is taken", async () => {
    const files = { ".github/agent-fix.yml": TEST, ".devcontainer/devcontainer.json": DEVCONTAINER };
    const fallback = await load(files);
    expect(fallback.image).toBeUndefined();
    expect(fallback.configNote).toBe(
      "The devcontainer's image mcr.microsoft.com/devcontainers/go:1-1.24-bookworm (.devcontainer/devcontainer.json) is not one the operator allows; ran in the operator's default image instead (repository.images in the operator config allows more; `sandbox.image` in .github/agent-fix.yml names an allowed one).",
    );
    const allowed = await load(files, {
      images: ["agent-fix-sandbox-rich:*", "mcr.microsoft.com/devcontainers/**"],
    });
    expect(allowed.image).toBe("mcr.microsoft.com/devcontainers/go:1-1.24-bookworm");
    expect(allowed.configNote).toBeUndefined();
  });

  it("with no agent-fix.yml, a set-aside devcontainer falls back to detection and the toolchain image", async () => {
    const config = await load({
      "go.mod": "module example.com/x\n\ngo 1.22\n",
      "x_test.go": "package x\n",
      ".devcontainer/devcontainer.json": DEVCONTAINER,
    });
    expect(config.testCommand).toContain("go test");
    expect(config.image).toBe(rules.policy.toolchainImage);
    expect(config.configNote).toContain(
      `The devcontainer's image mcr.microsoft.com/devcontainers/go:1-1.24-bookworm (.devcontainer/devcontainer.json) is not one the operator allows; ran in \`${rules.policy.toolchainImage}\` instead`,
    );
  });

  it("`*` stops at `/`: a pattern for one name does not allow another repository's image under it", async () => {
    const files = {
      ".github/agent-fix.yml": `${TEST}sandbox:\n  image: agent-fix-sandbox:0.2.0/../../evil/image:1\n`,
    };
    await expect(load(files)).rejects.toMatchObject({ code: "repo_image_not_allowed" });
    await expect(
      load(
        { ".github/agent-fix.yml": `${TEST}sandbox:\n  image: ghcr.io/my-org-evil/x:1\n` },
        {
          images: ["ghcr.io/my-org/*"],
        },
      ),
    ).rejects.toMatchObject({ code: "repo_image_not_allowed" });
  });

  it("agent-fix.yml's `sandbox.image` wins over devcontainer.json", async () => {
    const both = await load({
      ".github/agent-fix.yml": `${TEST}sandbox:\n  image: agent-fix-sandbox-rich:0.1.0\n`,
      ".devcontainer/devcontainer.json": DEVCONTAINER,
    });
    expect(both.image).toBe("agent-fix-sandbox-rich:0.1.0");
  });

  it("a devcontainer's build.dockerfile is built when it starts from allowed images only and fetches nothing", async () => {
    const devcontainer = '{ "build": { "dockerfile": "Dockerfile", "context": ".." } }';
    const dockerfile =
      "# a multi-stage build\nFROM agent-fix-sandbox-rich:0.1.0 AS tools\nFROM agent-fix-sandbox:0.2.0\nCOPY --from=tools /usr/bin/go /usr/local/bin/go\nCOPY . /opt/src\n";
    const built = await load({
      ".github/agent-fix.yml": TEST,
      ".devcontainer/devcontainer.json": devcontainer,
      ".devcontainer/Dockerfile": dockerfile,
    });
    expect(built.image).toBeUndefined();
    expect(built.imageBuild).toEqual({
      dockerfilePath: ".devcontainer/Dockerfile",
      dockerfile,
      context: ".",
      bases: ["agent-fix-sandbox-rich:0.1.0", "agent-fix-sandbox:0.2.0"],
    });
    const refused = async (text: string) =>
      load({
        ".github/agent-fix.yml": TEST,
        ".devcontainer/devcontainer.json": devcontainer,
        ".devcontainer/Dockerfile": text,
      }).then(
        () => new Error("accepted"),
        (e: unknown) => e as Error,
      );
    // A base the operator does not allow is set aside like a devcontainer image; the rest is refused.
    const publicBase = await load({
      ".github/agent-fix.yml": TEST,
      ".devcontainer/devcontainer.json": devcontainer,
      ".devcontainer/Dockerfile": "FROM mcr.microsoft.com/devcontainers/python:3\nRUN pip --version\n",
    });
    expect(publicBase.imageBuild).toBeUndefined();
    expect(publicBase.configNote).toContain(
      "The devcontainer's image mcr.microsoft.com/devcontainers/python:3 (.devcontainer/Dockerfile) is not one the operator allows",
    );
    expect((await refused("FROM agent-fix-build:1\n")).message).toContain(
      "which is not one of the images the operator allows",
    );
    expect(
      (await refused("FROM agent-fix-sandbox:0.2.0\nCOPY --from=docker.io/library/busybox / /\n")).message,
    ).toContain(
      ":2: COPY --from=docker.io/library/busybox / /: --from=docker.io/library/busybox is not a stage defined above",
    );
    expect((await refused("ARG BASE=evil\nFROM $BASE\n")).message).toContain(
      "names its image with a variable",
    );
    expect(
      (await refused("FROM agent-fix-sandbox:0.2.0\nADD \\\n  https://example.com/x.sh /x.sh\n")).message,
    ).toContain(
      ":2: ADD   https://example.com/x.sh /x.sh: https://example.com/x.sh is fetched from the network",
    );
    await expect(
      load({
        ".github/agent-fix.yml": TEST,
        ".devcontainer.json": '{ "build": { "dockerfile": "Dockerfile", "context": "../.." } }',
        Dockerfile: "FROM agent-fix-sandbox:0.2.0\n",
      }),
    ).rejects.toThrow(".devcontainer.json: build.context ../.. is outside the repository");
  });

  it("an operator who allows no image leaves every repository on the default, and says so", async () => {
    await expect(
      load(
        { ".github/agent-fix.yml": `${TEST}sandbox:\n  image: agent-fix-sandbox:0.2.0\n` },
        { images: [] },
      ),
    ).rejects.toThrow("not one of the images the operator allows (none: only the operator's default image)");
  });
});
