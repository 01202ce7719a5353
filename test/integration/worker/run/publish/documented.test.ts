import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";

// The stand-in's answers taught for publishing, checked against GitHub's OpenAPI description.
const spec = createRequire(import.meta.url)("@octokit/openapi/generated/api.github.com.json") as {
  paths: Record<string, Record<string, { responses: Record<string, { $ref?: string }> }>>;
  components: { responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }> };
};

/** The documented statuses of an operation, and the required fields of each documented error body. */
function documented(path: string, method: string) {
  const responses = spec.paths[path]?.[method]?.responses ?? {};
  return {
    statuses: Object.keys(responses).map(Number),
    errorFields: (status: number) => {
      const ref = responses[String(status)]?.$ref?.split("/").pop() ?? "";
      const schema = spec.components.responses[ref]?.content["application/json"]?.schema.$ref ?? "";
      return schema.endsWith("validation-error") ? ["message", "documentation_url"] : ["message"];
    },
  };
}

describe("the stand-in answers publishing requests as GitHub documents them", () => {
  let github: GitHubServer;
  let token: string;
  const call = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${github.apiUrl}${path}`, {
      method,
      headers: { authorization: `token ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    github = await startGitHubServer();
    const repo = await github.addRepo({ owner: "octo", name: "free", files: { "a.txt": "a\n" } });
    github.state.repo(repo.owner, repo.name)!.plan = "free";
    github.addIssue("octo", "free", { title: "t" });
    token = github.mintToken();
  });
  afterAll(() => github.stop());

  it("a draft on the Free plan: 422 with GitHub's message, a documented answer of pulls/create", async () => {
    const answer = await call("POST", "/repos/octo/free/pulls", {
      title: "t",
      head: "main",
      base: "main",
      draft: true,
    });
    const doc = documented("/repos/{owner}/{repo}/pulls", "post");
    expect(doc.statuses).toContain(answer.status);
    expect(answer.status).toBe(422);
    expect(answer.body.message).toBe("Draft pull requests are not supported in this repository.");
    for (const field of doc.errorFields(422)) expect(answer.body).toHaveProperty(field);
  });

  it("a comment over 65,536 characters as GitHub counts them: 422 of issues/create-comment; exactly 65,536 emoji pass", async () => {
    const doc = documented("/repos/{owner}/{repo}/issues/{issue_number}/comments", "post");
    const over = await call("POST", "/repos/octo/free/issues/1/comments", { body: "x".repeat(65_537) });
    expect(doc.statuses).toContain(over.status);
    expect(over.status).toBe(422);
    const emoji = await call("POST", "/repos/octo/free/issues/1/comments", { body: "😀".repeat(65_536) });
    expect(emoji.status).toBe(201);
  });
});
