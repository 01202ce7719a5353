/**
 * The repository's pull request template (issue 24), found where GitHub looks for it, on the default
 * branch, through the GitHub stand-in's contents API (real HTTP, real git), and attached to the config
 * the agent gets.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../../../worker/agent/config-file.js";
import type { ContentsApi } from "../../../../../worker/run/configure/contents.js";
import {
  findPullRequestTemplate,
  TEMPLATE_MAX_CHARS,
} from "../../../../../worker/run/configure/pr-template.js";
import { loadRepoConfig } from "../../../../../worker/run/configure/repo-config.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { installationApi } from "../../../../support/installation.js";

describe("the pull request template", () => {
  let github: GitHubServer;
  let api: ContentsApi;
  const owner = "tpl";
  let count = 0;

  beforeAll(async () => {
    github = await startGitHubServer();
    api = await installationApi<ContentsApi>(github);
  });
  afterAll(() => github.stop());

  /** The template found in a new repository holding `files` (and an owner's `.github` when `org`). */
  const templateOf = async (files: Record<string, string>, org = false) => {
    const name = `repo-${++count}`;
    await github.addRepo({ owner, name, files: { "README.md": "x\n", ...files } });
    return findPullRequestTemplate(
      { repo: api, org: org ? api : null },
      { owner, repo: name, defaultBranch: "main" },
    );
  };

  it("is found in .github/, the root or docs/, in any case, .md, .txt or without extension", async () => {
    const text = "## What\n<!-- what changed -->\n\n- [ ] Tests\n";
    expect(await templateOf({ ".github/pull_request_template.md": text })).toEqual({
      path: ".github/pull_request_template.md",
      text: text.trim(),
    });
    expect((await templateOf({ "PULL_REQUEST_TEMPLATE.md": "root" }))?.path).toBe("PULL_REQUEST_TEMPLATE.md");
    expect((await templateOf({ "docs/pull_request_template.txt": "docs" }))?.path).toBe(
      "docs/pull_request_template.txt",
    );
    expect((await templateOf({ ".github/Pull_Request_Template": "bare" }))?.path).toBe(
      ".github/Pull_Request_Template",
    );
    // .github/ first, then the root, then docs/.
    const all = { "docs/pull_request_template.md": "docs", "pull_request_template.md": "root" };
    expect((await templateOf(all))?.text).toBe("root");
    expect((await templateOf({ ...all, ".github/pull_request_template.md": "hidden" }))?.text).toBe("hidden");
  });

  it("is the single file of a PULL_REQUEST_TEMPLATE/ directory; of several, none is chosen", async () => {
    expect(await templateOf({ ".github/PULL_REQUEST_TEMPLATE/fix.md": "one" })).toEqual({
      path: ".github/PULL_REQUEST_TEMPLATE/fix.md",
      text: "one",
    });
    expect(
      await templateOf({
        "docs/PULL_REQUEST_TEMPLATE/fix.md": "a",
        "docs/PULL_REQUEST_TEMPLATE/feature.md": "b",
      }),
    ).toBeNull();
    // A file in the folders wins over a directory.
    expect(
      (await templateOf({ "PULL_REQUEST_TEMPLATE/x.md": "dir", ".github/pull_request_template.md": "file" }))
        ?.text,
    ).toBe("file");
  });

  it("is none when there is none, or it is empty; else the owner's .github repository's", async () => {
    expect(await templateOf({})).toBeNull();
    expect(await templateOf({ ".github/pull_request_template.md": "  \n" })).toBeNull();
    await github.addRepo({ owner, name: ".github", files: { ".github/pull_request_template.md": "shared" } });
    expect(await templateOf({}, true)).toEqual({
      path: `${owner}/.github: .github/pull_request_template.md`,
      text: "shared",
    });
    expect((await templateOf({ "pull_request_template.md": "own" }, true))?.text).toBe("own");
  });

  it("is read on the default branch only, and a long one is cut with a note", async () => {
    const long = await templateOf({ ".github/pull_request_template.md": `${"- [ ] check\n".repeat(2_000)}` });
    expect(long?.text.length).toBeLessThan(TEMPLATE_MAX_CHARS + 100);
    expect(long?.text).toMatch(/\n\n\[The template was cut here: 8000 of 23999 characters shown\.\]$/);
    // A template only on another branch is not the repository's.
    const name = `repo-${++count}`;
    await github.addRepo({ owner, name, files: { "README.md": "x\n" } });
    const bare = github.repoDir(owner, name);
    const blob = execFileSync("git", ["--git-dir", bare, "hash-object", "-w", "--stdin"], { input: "other" })
      .toString()
      .trim();
    const tree = execFileSync("git", ["--git-dir", bare, "mktree"], {
      input: `100644 blob ${blob}\tpull_request_template.md\n`,
    })
      .toString()
      .trim();
    const commit = execFileSync("git", [
      "--git-dir",
      bare,
      "-c",
      "user.name=x",
      "-c",
      "user.email=x@x",
      "commit-tree",
      tree,
      "-m",
      "other",
    ])
      .toString()
      .trim();
    execFileSync("git", ["--git-dir", bare, "update-ref", "refs/heads/other", commit]);
    expect(
      await findPullRequestTemplate({ repo: api, org: null }, { owner, repo: name, defaultBranch: "main" }),
    ).toBeNull();
  });

  it("comes with the repository's config to the agent", async () => {
    const operator = await loadConfig();
    await github.addRepo({
      owner,
      name: "configured",
      files: {
        ".github/agent-fix.yml": "test:\n  command: python3 -m unittest\n",
        ".github/pull_request_template.md": "## Summary\n",
      },
    });
    const config = await loadRepoConfig(
      { repo: api, org: null },
      { owner, repo: "configured", defaultBranch: "main" },
      { defaultMaxSteps: 50, policy: operator.repository, model: operator.model },
    );
    expect(config.agent.pullRequestTemplate).toEqual({
      path: ".github/pull_request_template.md",
      text: "## Summary",
    });
  });
});
