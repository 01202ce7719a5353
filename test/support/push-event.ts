/**
 * GitHub's `push` webhook for a branch of the stand-in that moved from `before` to `after`: its own
 * example payload (@octokit/webhooks-examples, a branch push with an installation) with the commits,
 * repository, installation and sender made this repository's. Sign and POST it with `deliver` or
 * `Stack.send`.
 */
import { envelope, storedRepo } from "./ci-webhooks.js";
import { commitsBetween, readCommit } from "./github/git-history.js";
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
  // A new branch (`before` all zeros) is `created`, with its head commit.
  const created = /^0+$/.test(target.before);
  const pushed = created
    ? [await readCommit(bare, target.after)]
    : await commitsBetween(bare, target.before, target.after);
  const commits = pushed.map((c) => ({
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
      created,
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

/**
 * A person's commit on `branch` of the stand-in (`commitAs`), then GitHub's `push` of it delivered to the
 * stack's app, as a push to GitHub does. Returns the new commit.
 */
export async function pushAs(
  stack: { github: GitHubServer; send(event: string, payload: unknown): Promise<number> },
  author: string,
  target: { owner: string; repo: string; branch: string; from?: string },
  files: Record<string, string | null>,
  message?: string,
): Promise<string> {
  const before = (await stack.github.branches(target.owner, target.repo))[target.branch];
  const after = await stack.github.commitAs(author, target, files, message);
  const push = await pushEvent(stack.github, { ...target, before: before ?? "0".repeat(40), after }, author);
  const status = await stack.send(push.event, push.payload);
  if (status >= 300) throw new Error(`the app answered the push of ${target.branch} with ${status}`);
  return after;
}
