/**
 * What the stand-in answers a user-to-server token (ghu_, from the OAuth flow in oauth.ts): the user
 * (GET /user) and a repository the user can see (GET /repos/{owner}/{repo}, or by id GET
 * /repositories/{id}, where GitHub's redirects for renamed repositories point); a repository the user has
 * no permission on is a 404, as GitHub hides private repositories from those who cannot see them.
 */
import type { StandInOAuth } from "./oauth.js";
import { repoJson, userJson } from "./render.js";
import type { StandInState } from "./state.js";

interface UserAnswer {
  status: number;
  body: unknown;
  /** "user:LOGIN", or "anonymous" for a bad token (recorded in state.requests). */
  actor: string;
}

const DOCS = "https://docs.github.com/rest";

export function userTokenAnswer(
  state: StandInState,
  oauth: StandInOAuth,
  token: string,
  method: string,
  path: string,
  base: string,
): UserAnswer {
  const login = oauth.userOf(token);
  if (!login) {
    return {
      status: 401,
      body: { message: "Bad credentials", documentation_url: DOCS, status: "401" },
      actor: "anonymous",
    };
  }
  const actor = `user:${login}`;
  const user = oauth.users.get(login) ?? oauth.addUser(login);
  if (method === "GET" && path === "/user") return { status: 200, body: userJson(user), actor };
  const [, owner = "", name = ""] = /^\/repos\/([^/]+)\/([^/]+)$/.exec(path) ?? [];
  const [, id = ""] = /^\/repositories\/(\d+)$/.exec(path) ?? [];
  const repo =
    method !== "GET"
      ? undefined
      : owner
        ? state.repo(owner, name)
        : id
          ? state.repos.find((r) => r.id === Number(id))
          : undefined;
  if (repo && state.permission(repo, login) !== "none") {
    return { status: 200, body: repoJson(base, repo), actor };
  }
  const notFound = {
    message: "Not Found",
    documentation_url: `${DOCS}/repos/repos#get-a-repository`,
    status: "404",
  };
  return { status: 404, body: notFound, actor };
}
