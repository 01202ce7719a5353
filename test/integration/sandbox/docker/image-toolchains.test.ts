/**
 * The toolchains of the two real sandbox images, probed through the Docker provider; a repository's
 * declared versions choosing between them through the GitHub stand-in's contents API (loadRepoConfig
 * with the provider's probe); the run's variables in a real sandbox's shell; and a Node the slim image
 * lacks provided from the npm registry in setup (with setup's network, through this host's CA bundle),
 * then run with the network cut, as the sandboxes after setup are.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import { SANDBOX_IMAGE, SANDBOX_RICH_IMAGE } from "../../../../sandbox/version.js";
import { loadConfig } from "../../../../worker/agent/config-file.js";
import { partRequirements } from "../../../../worker/config/detect/requirements.js";
import type { ContentsApi } from "../../../../worker/run/configure/contents.js";
import { loadRepoConfig } from "../../../../worker/run/configure/repo-config.js";
import type { OperatorRules } from "../../../../worker/run/configure/repo-rules.js";
import { chooseToolchains } from "../../../../worker/run/configure/toolchain-choice.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";
import { installationApi } from "../../../support/installation.js";
import { requireSandboxImage } from "../../../support/services.js";

const ready = (await requireSandboxImage()) && (await requireSandboxImage(SANDBOX_RICH_IMAGE));
const HOST_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

describe.runIf(ready)("the toolchains of the sandbox images", () => {
  const provider = new DockerSandboxProvider({ caBundle: HOST_BUNDLE });
  let github: GitHubServer;
  let api: ContentsApi;
  let rules: OperatorRules;
  let count = 0;
  const load = async (files: Record<string, string>) => {
    const name = `toolchains-${++count}`;
    await github.addRepo({ owner: "octo", name, files: { "README.md": "x\n", ...files } });
    return loadRepoConfig(
      { repo: api, org: null },
      { owner: "octo", repo: name, defaultBranch: "main" },
      rules,
    );
  };
  const dirs: string[] = [];

  beforeAll(async () => {
    const operator = await loadConfig();
    rules = {
      defaultMaxSteps: 50,
      policy: operator.repository,
      model: operator.model,
      toolchains: (image) => provider.toolchains(image),
    };
    github = await startGitHubServer();
    api = await installationApi<ContentsApi>(github);
  });
  afterAll(async () => {
    await github?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("the slim image has Node 18 and Python 3.11 only; the rich one Node 20.19, Python 3.13, Go, Rust and Java", async () => {
    const slim = await provider.toolchains(undefined);
    expect(slim.image).toBe(SANDBOX_IMAGE);
    expect(Object.keys(slim.versions).sort()).toEqual(["node", "python"]);
    expect(slim.versions.node).toMatch(/^18\.\d+\.\d+$/);
    expect(slim.versions.python).toMatch(/^3\.11\.\d+$/);
    const rich = await provider.toolchains(SANDBOX_RICH_IMAGE);
    expect(rich.versions).toMatchObject({
      node: expect.stringMatching(/^20\.19\.\d+$/),
      python: expect.stringMatching(/^3\.13\.\d+$/),
      go: expect.stringMatching(/^1\.2\d\.\d+$/),
      rust: expect.stringMatching(/^1\.\d+\.\d+$/),
      ruby: expect.stringMatching(/^3\.\d+\.\d+$/),
      java: expect.stringMatching(/^21\.\d+\.\d+$/),
    });
    // Kept by image id: the second answer is the first one.
    expect(await provider.toolchains(SANDBOX_RICH_IMAGE)).toEqual(rich);
  }, 120_000);

  it("a package whose engines need Node >= 20.19 gets the rich image, its version and file in the status", async () => {
    const config = await load({
      "package.json": `{\n  "scripts": { "test": "vitest run" },\n  "engines": { "node": "^20.19.0 || >=22.12.0" }\n}\n`,
    });
    expect(config.image).toBe(SANDBOX_RICH_IMAGE);
    expect(config.configNote).toContain(
      `- node ^20.19.0 || >=22.12.0 (package.json line 3 (\`engines.node\`)): \`${SANDBOX_RICH_IMAGE}\` has 20.19.`,
    );
    expect(config.configNote).toContain(`sandbox:\n  image: ${SANDBOX_RICH_IMAGE}\n`);
  }, 120_000);

  it("a package with no engines runs in the default image, and a Go module's caches are the shell's", async () => {
    const node = await load({ "package.json": '{ "scripts": { "test": "node --test" } }\n' });
    expect(node.image).toBeUndefined();
    expect(node.workspaceEnv).toBeUndefined();
    const go = await load({ "go.mod": "module example.com/x\n\ngo 1.22\n" });
    expect(go.image).toBe(SANDBOX_RICH_IMAGE);
    expect(go.testCommand).toBe("go test ./...");
    expect(go.workspaceEnv).toEqual({
      vars: {
        GOMODCACHE: { path: ".agent-fix-cache/go/mod" },
        GOCACHE: { path: ".agent-fix-cache/go/build" },
      },
      path: [],
    });
  }, 120_000);

  it("requires-python no image has is refused before any sandbox, naming the file, the images' versions and the fix", async () => {
    const error = await load({
      "pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.14"\n',
      "tests/test_x.py": "def test_x(): pass\n",
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "repo_toolchain_unavailable", fault: "config", retryable: false });
    expect((error as Error).message).toMatch(
      /^The repository needs python >=3\.14 \(pyproject\.toml line 3 \(`requires-python`\)\), which none of the operator's images provides together: `agent-fix-sandbox:[\d.]+` \(python 3\.11\.\d+\); `agent-fix-sandbox-rich:[\d.]+` \(python 3\.13\.\d+\)$/,
    );
  }, 120_000);

  it("the run's variables are absolute under the workspace in the sandbox's shell, and a provided Node is on PATH", async () => {
    const source = await mkdtemp(join(tmpdir(), "af-toolchains-"));
    dirs.push(source);
    const nvmrc = { "package.json": "{}", ".nvmrc": "22\n" };
    const names = new Set(Object.keys(nvmrc));
    const choice = chooseToolchains(
      [
        {
          dir: "",
          ecosystem: "node",
          evidence: [],
          setup: [],
          test: "npm test",
          env: {},
          requirements: partRequirements("node", {
            names,
            text: (name) => nvmrc[name as keyof typeof nvmrc],
          }),
        },
      ],
      [{ image: undefined, toolchains: await provider.toolchains(undefined) }],
      { setupNetwork: true },
    );
    const sandbox = await provider.create({
      sourceDir: source,
      jobId: "image-toolchains",
      network: true,
      workspaceEnv: {
        vars: {
          ...choice.env.vars,
          GOMODCACHE: { path: ".agent-fix-cache/go/mod" },
          MAVEN_OPTS: { path: ".agent-fix-cache/m2/repository", prefix: "-Dmaven.repo.local=" },
        },
        path: choice.env.path,
      },
    });
    try {
      const env = await sandbox.exec('echo "$GOMODCACHE|$MAVEN_OPTS|$PATH"');
      expect(env.output.trim()).toMatch(
        /^\/workspace\/\.agent-fix-cache\/go\/mod\|-Dmaven\.repo\.local=\/workspace\/\.agent-fix-cache\/m2\/repository\|\/workspace\/\.agent-fix-cache\/node\/node_modules\/\.bin:\/usr\/local\/sbin:/,
      );
      for (const command of choice.setup) {
        const installed = await sandbox.exec(command, { timeoutMs: 600_000 });
        expect(installed.exitCode, installed.output).toBe(0);
      }
      await sandbox.setNetwork(false);
      // Offline, as every sandbox after setup: the Node setup installed, and npm running on it.
      const version = await sandbox.exec("node --version && npm --version && node -p process.version");
      expect(version.exitCode, version.output).toBe(0);
      expect(version.output).toMatch(/^v22\.\d+\.\d+\n/);
    } finally {
      await sandbox.dispose();
    }
  }, 900_000);
});
