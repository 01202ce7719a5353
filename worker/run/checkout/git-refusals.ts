/**
 * What GitHub's git server refuses, in words a maintainer can act on: a push declined by a rule
 * (ruleset, branch protection, workflow files, pre-receive hook), and a new token it does not accept yet.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { AgentFixError } from "../../../src/shared/errors.js";

type PushRefusalKind = "workflows" | "ruleset" | "protected_branch" | "pre_receive";

const hints: Record<PushRefusalKind, string> = {
  workflows:
    "The change touches a GitHub Actions workflow and the app has no `workflows` permission. Grant it, or add " +
    "`.github/workflows/**` to `forbidden_paths` in .github/agent-fix.yml so the agent leaves workflows alone.",
  ruleset:
    "A repository ruleset covers the app's branch. Exclude `agent-fix/*` from the ruleset, or add the app to its bypass list.",
  protected_branch:
    "Branch protection covers the app's branch. Remove the protection rule that matches `agent-fix/*`.",
  pre_receive:
    "A pre-receive hook of this GitHub Enterprise Server declined the push; its message is above. Ask the server's administrators.",
};

function kindOf(reason: string): PushRefusalKind {
  if (/without `?workflows`? permission/.test(reason)) return "workflows";
  if (/repository rule violations/.test(reason)) return "ruleset";
  if (/protected branch hook declined/.test(reason)) return "protected_branch";
  return "pre_receive";
}

/**
 * The push error as GitHub's refusal (`! [remote rejected] SRC -> DST (REASON)` and the `remote:` lines
 * before it), or null when the server did not refuse the push by a rule.
 */
export function pushRefusal(error: unknown, branch: string): AgentFixError | null {
  const text = error instanceof Error ? error.message : String(error);
  const reason = /! \[remote rejected\] \S+ -> \S+ \((.+)\)/.exec(text)?.[1];
  if (!reason) return null;
  const said = text
    .split("\n")
    .map((line) => /^(?:.*?)remote: ?(.*)$/.exec(line)?.[1]?.trim())
    .filter((line): line is string => Boolean(line));
  const kind = kindOf(reason);
  return new AgentFixError(
    `GitHub refused the push to ${branch}: ${reason}${said.length ? `. GitHub said: ${said.join(" ")}` : ""}`,
    { code: `push_refused_${kind}`, fault: "repository", retryable: false, hint: hints[kind], cause: error },
  );
}

/** How git reports a token the server did not accept. */
const REFUSED_TOKEN =
  /could not read Username|Authentication failed|Invalid username or (?:password|token)|returned error: 401|repository '[^']*' not found/i;

/** GitHub may refuse a token for a few seconds after minting it; Octokit retries its 401s as long. */
const FRESH_TOKEN_MS = 5_000;

/**
 * Runs a git command that uses a token minted just before `mintedAt`, again while GitHub refuses the
 * token and it is under 5 seconds old, waiting 1 s, 2 s, ... in between (as @octokit/auth-app does).
 */
export async function retryWhileTokenIsNew<T>(
  run: () => Promise<T>,
  options: { mintedAt: number; signal?: AbortSignal | undefined },
): Promise<T> {
  for (let retries = 1; ; retries++) {
    try {
      return await run();
    } catch (error) {
      const age = Date.now() - options.mintedAt;
      if (!REFUSED_TOKEN.test(String(error)) || age >= FRESH_TOKEN_MS || options.signal?.aborted) throw error;
      await sleep(retries * 1000);
    }
  }
}
