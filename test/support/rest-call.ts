/**
 * Raw REST calls to the GitHub stand-in with an installation token, for tests that check GitHub's
 * exact answers (status, headers, body) rather than what a client library makes of them. Redirects
 * are not followed: a 302 is an answer to check.
 */
import type { GitHubServer } from "./github-server.js";

export interface RestAnswer {
  status: number;
  headers: Headers;
  /** The JSON body, read by the tests' assertions; undefined for an empty one. */
  // biome-ignore lint/suspicious/noExplicitAny: GitHub's answers are many shapes; tests check them against the OpenAPI schemas
  body: any;
}

export type RestCall = (method: string, path: string, body?: unknown, token?: string) => Promise<RestAnswer>;

/** `call(method, path, body?, token?)` against `${github.apiUrl}${path}`, with `token` by default. */
export function restCaller(github: GitHubServer, token: string): RestCall {
  return async (method, path, body, as = token) => {
    const response = await fetch(`${github.apiUrl}${path}`, {
      method,
      redirect: "manual",
      headers: { authorization: `token ${as}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
}
