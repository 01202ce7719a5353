import { createProbot } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appIdentity } from "../../../../worker/github/app-identity.js";
import { type GitHubServer, startGitHubServer } from "../../../support/github-server.js";

// The worker's commit identity, looked up from the GitHub stand-in as production does (GHE_HOST).
describe("the app's commit identity", () => {
  let github: GitHubServer;

  beforeAll(async () => {
    github = await startGitHubServer({ appSlug: "fixer" });
  });
  afterAll(() => github.stop());

  it("is <bot user id>+SLUG[bot]@users.noreply.<GHE host>, the address GitHub links to the bot", async () => {
    const probot = createProbot({
      env: {
        APP_ID: String(github.appId),
        PRIVATE_KEY: github.keys.privateKeyPem,
        GHE_HOST: github.host,
        GHE_PROTOCOL: "http",
        LOG_LEVEL: "fatal",
      },
    });
    const identity = await appIdentity(probot, { APP_ID: github.appId, GHE_HOST: github.host });
    expect(identity).toEqual({
      name: "fixer[bot]",
      email: `${github.bot.id}+fixer[bot]@users.noreply.127.0.0.1`,
    });
    // The bot user was asked for where GitHub answers it (not with the app's JWT).
    const lookups = github.state.requests.filter((r) => r.path.startsWith("/users/"));
    // toMatchObject: the stand-in also notes when it answered (answeredAt), which says nothing here.
    expect(lookups).toMatchObject([
      { method: "GET", path: "/users/fixer%5Bbot%5D", status: 200, actor: "anonymous" },
    ]);
  });
});
