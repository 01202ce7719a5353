/**
 * GitHub's `push` webhook for a branch of the stand-in that moved from `before` to `after`: its own
 * example payload (@octokit/webhooks-examples, a branch push with an installation) with the commits,
 * repository, installation and sender made this repository's. Sign and POST it with `deliver` or
 * `Stack.send`.
 */
import { envelope, storedRepo } from "./ci-webhooks.js";
import { commitsBetween } from "./github/git-history.js";
import type { GitHubServer } from "./github-server.js";
import { type Delivery, webhookExample } from "./webhooks.js";

export async function pushEvent(
  github: GitHubServer,
  target: { owner: string; repo: string; branch: string; before: string; after: string },
  pusher = "maintainer",
): Promise<Delivery> {
  const repo = storedRepo(github, target.owner, target.repo);
  const example = webhookExample(
    "push",
    undefined,
    (e) => String(e.ref).startsWith("refs/heads/") && "installation" in e,
  );
  const bare = github.repoDir(repo.owner, repo.name);
  const commits = (await commitsBetween(bare, target.before, target.after)).map((c) => ({
    id: c.sha,
    tree_id: c.tree,
    distinct: true,
    message: c.message,
    timestamp: c.committer.date,
    url: `${github.url}/${repo.owner}/${repo.name}/commit/${c.sha}`,
    author: { name: c.author.name, email: c.author.email },
    committer: { name: c.committer.name, email: c.committer.email },
    added: [],
    removed: [],
    modified: [],
  }));
  const email = `${pusher}@users.noreply.${new URL(github.url).hostname}`;
  return {
    event: "push",
    payload: {
      ...example,
      ref: `refs/heads/${target.branch}`,
      before: target.before,
      after: target.after,
      created: false,
      deleted: false,
      forced: false,
      base_ref: null,
      compare: `${github.url}/${repo.owner}/${repo.name}/compare/${target.before.slice(0, 12)}...${target.after.slice(0, 12)}`,
      commits,
      head_commit: commits.at(-1) ?? null,
      pusher: { name: pusher, email },
      ...envelope(github, repo, example, pusher),
    },
  };
}
