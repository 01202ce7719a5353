/**
 * Review requested from the code owners of the changed files (CODEOWNERS read through the stand-in's
 * contents API on the default branch, where GitHub looks for it), one by one, people and teams; the
 * owners GitHub refuses named; without a CODEOWNERS file, or when no owner can be asked, the person
 * who started the run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixJobData } from "../../../../../src/shared/queue/index.js";
import type { ContentsApi } from "../../../../../worker/run/configure/contents.js";
import type { WorkerGitHubApi } from "../../../../../worker/run/open/status-comment.js";
import { githubPublisher } from "../../../../../worker/run/publish/github-publisher.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { installationApi } from "../../../../support/installation.js";
import { draftOf, submittedTrajectory } from "../../../../support/published.js";

const PATCH = [
  "diff --git a/src/lib.py b/src/lib.py",
  "--- a/src/lib.py",
  "+++ b/src/lib.py",
  "@@ -1 +1 @@",
  "-a",
  "+b",
  "diff --git a/docs/guide.md b/docs/guide.md",
  "--- a/docs/guide.md",
  "+++ b/docs/guide.md",
  "@@ -1 +1 @@",
  "-a",
  "+b",
  "",
].join("\n");

describe("review from the code owners of the changed files", () => {
  let github: GitHubServer;
  let api: WorkerGitHubApi & ContentsApi;
  const owner = "octo";
  let repos = 0;

  async function repoWithPull(files: Record<string, string>) {
    const name = `owners-${repos++}`;
    const added = await github.addRepo({
      owner,
      name,
      files: { "src/lib.py": "a\n", "docs/guide.md": "a\n", ...files },
      permissions: { alice: "write", bob: "write", "octo/core": "write" },
    });
    github.addIssue(owner, name, { title: "Fix lib" });
    const pull = github.addPull(owner, name, { title: "Fix lib", head: "main" });
    const job: FixJobData = {
      ...{ installationId: 1, owner, repo: name, repoId: added.id, issueNumber: 1, requestedBy: "alice" },
      ...{ trigger: "label" as const, deliveryId: `d-${name}` },
    };
    const publisher = githubPublisher(api, job, { contents: async () => api });
    const draft = draftOf({
      ...submittedTrajectory("Fixed."),
      info: { ...submittedTrajectory("x").info, submission: PATCH },
    });
    return { pull, request: () => publisher.requestReview(pull.number, "alice", draft) };
  }

  beforeAll(async () => {
    github = await startGitHubServer();
    api = await installationApi<WorkerGitHubApi & ContentsApi>(github);
  });
  afterAll(async () => {
    await github.stop();
  });

  it("asks the owners of each changed file (last match wins), teams too, and names who could not be asked", async () => {
    const { pull, request } = await repoWithPull({
      ".github/CODEOWNERS":
        "*  @alice\n/src/ @bob @octo/core @octo/ghosts @stranger\ndocs/ @bob dev@example.com\n",
    });
    expect(await request()).toEqual({
      owners: ["@bob", "@octo/core"],
      problems: [
        "Review could not be requested from dev@example.com (.github/CODEOWNERS): not a GitHub user or a team of octo",
        "Review could not be requested from @stranger (.github/CODEOWNERS): Validation Failed: Reviews may only be requested from collaborators.",
        expect.stringMatching(
          /^Review could not be requested from @octo\/ghosts \(\.github\/CODEOWNERS\): Validation Failed: Reviews may only be requested from collaborators\. One or more of the teams/,
        ),
      ],
    });
    expect(pull.reviewRequests).toEqual(["bob"]); // not alice: `*` is overridden for both files
    expect(pull.teamReviewRequests).toEqual(["core"]);
  });

  it("reads docs/CODEOWNERS when that is the one there is, and falls back to the requester when no owner can be asked", async () => {
    const { pull, request } = await repoWithPull({ "docs/CODEOWNERS": "*.md @stranger\n" });
    expect(await request()).toEqual({
      owners: [],
      problems: [
        "Review could not be requested from @stranger (docs/CODEOWNERS): Validation Failed: Reviews may only be requested from collaborators.",
      ],
    });
    expect(pull.reviewRequests).toEqual(["alice"]);
  });

  it("without a CODEOWNERS file asks the person who started the run", async () => {
    const { pull, request } = await repoWithPull({});
    expect(await request()).toEqual({ owners: [], problems: [] });
    expect(pull.reviewRequests).toEqual(["alice"]);
  });

  it("takes the first file in GitHub's order though all are read at once, whatever the later ones answer", async () => {
    const { pull, request } = await repoWithPull({
      CODEOWNERS: "* @bob\n",
      "docs/CODEOWNERS": "* @stranger\n",
    });
    // docs/CODEOWNERS is asked for too, and fails: CODEOWNERS comes first, so that answer counts for nothing.
    github.failNext("GET", /\/contents\/docs%2FCODEOWNERS$/, 500);
    expect(await request()).toEqual({ owners: ["@bob"], problems: [] });
    expect(pull.reviewRequests).toEqual(["bob"]);
  });
});
