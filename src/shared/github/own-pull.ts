import { issueOfFixBranch } from "../fix-branch.js";

/**
 * Whether a pull request is the app's own fix pull request. A branch name proves nothing (anyone who
 * can push, or any other bot, can name a branch `agent-fix/issue-N`): the author must be the app's
 * bot user and the head must be a branch of the repository itself, not of a fork.
 */

export interface PullOwnership {
  head: { ref: string; repo?: { full_name: string } | null };
  user?: { login?: string; type?: string } | null;
  /** Set by GitHub when an app created the pull request. */
  performed_via_github_app?: { slug?: string } | null;
}

/**
 * The issue number `N` when `pull` is the app's fix pull request for it: branch `agent-fix/issue-N` of
 * `repositoryFullName`, opened by `appLogin` (the app's `SLUG[bot]`); null otherwise.
 */
export function ownFixIssue(
  pull: PullOwnership,
  repositoryFullName: string,
  appLogin: string,
): number | null {
  const issue = issueOfFixBranch(pull.head.ref);
  if (issue === null || pull.head.repo?.full_name !== repositoryFullName) return null;
  const viaApp = pull.performed_via_github_app?.slug;
  const byApp =
    (viaApp !== undefined && `${viaApp}[bot]` === appLogin) ||
    (pull.user?.type === "Bot" && pull.user.login === appLogin);
  return byApp ? issue : null;
}

interface AppClient {
  rest: { apps: { getAuthenticated(): Promise<{ data: { slug?: string } | null }> } };
}

/**
 * The app's bot login, read once through `GET /app` (the app's JWT) and kept; a failed read is not
 * kept, so the next event asks again.
 */
export function appLoginReader(appClient: () => Promise<AppClient>): () => Promise<string> {
  let login: Promise<string> | undefined;
  return () => {
    login ??= appClient()
      .then((client) => client.rest.apps.getAuthenticated())
      .then(({ data }) => {
        if (!data?.slug) throw new Error("GET /app returned no slug");
        return `${data.slug}[bot]`;
      });
    login.catch(() => {
      login = undefined;
    });
    return login;
  };
}
