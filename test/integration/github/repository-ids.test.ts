/**
 * The stand-in's repositories by id, as GitHub answers them: GET /repositories/{id} (where GitHub's
 * 301 for a renamed or transferred repository points) gives the repository of that id under its
 * current name, the same body as GET /repos/{owner}/{repo}; a deleted repository's id is 404 even when
 * another repository, of another installation, holds its name now; a token scoped to other
 * repositories, or of another installation, gets 404.
 */
import { Probot } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHubServer, StandInOctokit, startGitHubServer } from "../../support/github-server.js";

describe("GitHub stand-in: repositories by id", () => {
  let github: GitHubServer;
  const app = () =>
    new Probot({
      appId: github.appId,
      privateKey: github.keys.privateKeyPem,
      baseUrl: github.apiUrl,
      Octokit: StandInOctokit,
    });
  const byId = async (installationId: number, id: number) => {
    const octokit = await app().auth(installationId);
    return octokit
      .request("GET /repositories/{repository_id}", { repository_id: id })
      .then((answer) => ({ status: answer.status, name: answer.data.full_name }))
      .catch((error: { status: number }) => ({ status: error.status, name: null }));
  };

  beforeAll(async () => {
    github = await startGitHubServer();
  });
  afterAll(() => github?.stop());

  it("answers by id whatever the name, and not for a deleted repository whose name was re-created", async () => {
    const old = await github.addRepo({ owner: "octo", name: "named", files: { "a.txt": "a\n" } });
    const other = await github.addRepo({ owner: "octo", name: "other", files: { "a.txt": "a\n" } });
    expect(await byId(1, old.id)).toEqual({ status: 200, name: "octo/named" });

    await github.deleteRepo("octo", "named");
    const taken = await github.addRepo({
      owner: "octo",
      name: "named",
      files: { "b.txt": "b\n" },
      installationId: 2,
    });
    expect(taken.id).not.toBe(old.id);
    expect(await byId(1, old.id)).toEqual({ status: 404, name: null });
    expect(await byId(2, taken.id)).toEqual({ status: 200, name: "octo/named" });
    // Another installation's repository is not seen through this one's token.
    expect(await byId(1, taken.id)).toEqual({ status: 404, name: null });

    // A token scoped to one repository reaches no other by id.
    const scoped = await (await app().auth()).request(
      "POST /app/installations/{installation_id}/access_tokens",
      {
        installation_id: 1,
        repository_ids: [other.id],
      },
    );
    const third = await github.addRepo({ owner: "octo", name: "third", files: { "c.txt": "c\n" } });
    expect(await byId(1, third.id)).toEqual({ status: 200, name: "octo/third" });
    const answer = await fetch(`${github.apiUrl}/repositories/${third.id}`, {
      headers: { authorization: `token ${scoped.data.token}` },
    });
    expect(answer.status).toBe(404);
  });
});
