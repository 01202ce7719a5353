/**
 * The GitHub token of `agent-fix mine` and of `agent-fix eval`'s clones, and where GitHub is: the app's
 * own GHE_HOST and GHE_PROTOCOL. The token is only ever sent to that host.
 */
import { envSchema, githubApiUrl } from "../../../src/shared/config/env.js";
import { ConfigError } from "../../../src/shared/errors.js";

/** The variables that may hold the token, in order. */
const TOKEN_VARIABLES = ["GITHUB_TOKEN", "GH_TOKEN"] as const;

function githubToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const name of TOKEN_VARIABLES) if (env[name]) return env[name];
  return undefined;
}

export function requireGitHubToken(env: NodeJS.ProcessEnv = process.env): string {
  const token = githubToken(env);
  if (token) return token;
  throw new ConfigError("agent-fix mine needs a GitHub token in GITHUB_TOKEN (or GH_TOKEN)", {
    code: "mine_token_missing",
    hint: "Export GITHUB_TOKEN=... with read access to the repository's contents, pull requests and issues; for GitHub Enterprise also GHE_HOST.",
  });
}

/** Only the app's variables that say where GitHub is and how to treat its rate limits. */
export const githubSettings = (env: NodeJS.ProcessEnv) =>
  envSchema.pick({ GHE_HOST: true, GHE_PROTOCOL: true, AGENT_FIX_GITHUB_THROTTLE: true }).parse(env);

/** Where git is served: https://github.com, or the GitHub Enterprise host. */
function githubWebOrigin(env: NodeJS.ProcessEnv): string {
  return new URL(githubApiUrl(githubSettings(env))).origin.replace("://api.github.com", "://github.com");
}

/** The token for cloning `url`: only for the configured GitHub's own host, never sent elsewhere. */
export function tokenForCloneUrl(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    return new URL(url).origin === githubWebOrigin(env) ? githubToken(env) : undefined;
  } catch {
    // Not a URL (an scp-like git address, a path): nothing to authenticate.
    return undefined;
  }
}
