/**
 * The worker's GitHub client against the stand-in: an installation Octokit made by Probot from the
 * app's id and key, as the worker makes it, without throttling or retries (StandInOctokit). `Api` is
 * the narrow interface of the module under test (ReviewApi, ContentsApi, WorkerGitHubApi...).
 */
import { Probot } from "probot";
import { type GitHubServer, StandInOctokit } from "./github-server.js";

export async function installationApi<Api>(github: GitHubServer, installationId = 1): Promise<Api> {
  const probot = new Probot({
    appId: github.appId,
    privateKey: github.keys.privateKeyPem,
    baseUrl: github.apiUrl,
    Octokit: StandInOctokit,
  });
  return (await probot.auth(installationId)) as unknown as Api;
}
