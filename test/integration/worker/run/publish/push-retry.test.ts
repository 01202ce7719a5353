import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixJobData } from "../../../../../src/shared/queue/index.js";
import { cloneRepository } from "../../../../../worker/run/checkout/clone.js";
import { githubStatusReporter, type WorkerGitHubApi } from "../../../../../worker/run/open/status-comment.js";
import { githubPublisher } from "../../../../../worker/run/publish/github-publisher.js";
import {
  type KeptChange,
  pendingPublishes,
  pendingRun,
} from "../../../../../worker/run/publish/pending-publishes.js";
import { commitAndPush, type UnpushedChange } from "../../../../../worker/run/push/commit-and-push.js";
import { resumePublishing } from "../../../../../worker/run/resume-publishing.js";
import { type GitHubServer, startGitHubServer } from "../../../../support/github-server.js";
import { installationApi } from "../../../../support/installation.js";
import { capturingLogger, type LogLine } from "../../../../support/logs.js";
import { draftOf, submittedTrajectory } from "../../../../support/published.js";
import { dropPrefix, redisAvailable, TEST_REDIS_URL, testPrefix } from "../../../../support/redis.js";

const ready = await redisAvailable();
type PushOptions = Parameters<typeof commitAndPush>[0];

// A push GitHub's git server fails (5xx) or that a shutdown stops: the tested change is kept in the
// real Redis and a later attempt pushes the same tree and publishes, against the git stand-in.
describe.runIf(ready)("a push that does not get through", () => {
  let github: GitHubServer;
  let api: WorkerGitHubApi;
  let redis: Redis;
  let root: string;
  const owner = "octo";
  const prefix = testPrefix();
  const identity = { name: "agent-fix-test[bot]", email: "bot@users.noreply.example" };
  const patch =
    "diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n";
  let repos = 0;

  /** A repository with issue #1, cloned; the change adding b.txt with the tree it makes. */
  async function cloned() {
    const name = `push-${repos++}`;
    const repo = await github.addRepo({
      owner,
      name,
      files: { "a.txt": "a\n" },
      permissions: { alice: "write" },
    });
    github.addIssue(owner, name, { title: "a.txt needs b", body: "Add b." });
    const dir = join(root, name);
    const cloneUrl = `${github.url}/${owner}/${name}.git`;
    const checkout = await cloneRepository({ cloneUrl, token: github.mintToken(), dir, branch: "main" });
    const change: UnpushedChange = {
      baseBranch: "main",
      baseSha: checkout.headSha,
      patch,
      tree: treeOf(dir),
      commitTitle: "a.txt needs b",
      forbiddenPaths: [],
      force: true,
    };
    const job: FixJobData = {
      ...{ installationId: 1, owner, repo: name, repoId: repo.id, issueNumber: 1, requestedBy: "alice" },
      ...{ trigger: "label" as const, deliveryId: `d-${name}` },
    };
    return { name, dir, cloneUrl, change, job, key: pendingRun({ id: `fix-${repo.id}-1`, timestamp: 1 }) };
  }
  /** The tree `patch` makes on the checkout at `dir`, which is left as it was. */
  function treeOf(dir: string): string {
    const git = (args: string[], input?: string) =>
      execFileSync("git", args, { cwd: dir, encoding: "utf8", ...(input ? { input } : {}) }).trim();
    git(["apply", "--index", "-"], patch);
    const tree = git(["write-tree"]);
    git(["reset", "--quiet", "--hard"]);
    return tree;
  }
  /** A later attempt resuming `kept` for a repository cloned() made. */
  const resume = (
    repo: { job: FixJobData; cloneUrl: string; key: string },
    kept: KeptChange,
    store: ReturnType<typeof pendingPublishes>,
  ) =>
    resumePublishing({
      kept,
      publisher: githubPublisher(api, repo.job),
      status: githubStatusReporter(api, repo.job),
      requestedBy: "alice",
      push: {
        cloneUrl: repo.cloneUrl,
        identity,
        token: async () => github.mintToken(),
        signal: new AbortController().signal,
        workRoot: root,
      },
      store,
      key: repo.key,
    });
  /** commitAndPush as the app for issue #1, a fresh token per push; not stopped unless `signal` says so. */
  const pushAsApp = (
    options: Omit<PushOptions, "identity" | "issueNumber" | "pushToken" | "signal"> &
      Partial<Pick<PushOptions, "signal">>,
  ) =>
    commitAndPush({
      identity,
      issueNumber: 1,
      pushToken: async () => github.mintToken(),
      signal: new AbortController().signal,
      ...options,
    });
  const bare = (name: string, ...args: string[]) =>
    execFileSync("git", ["--git-dir", github.repoDir(owner, name), ...args], { encoding: "utf8" }).trim();

  beforeAll(async () => {
    github = await startGitHubServer();
    api = await installationApi<WorkerGitHubApi>(github);
    redis = new Redis(TEST_REDIS_URL);
    root = await mkdtemp(join(tmpdir(), "af-push-retry-"));
  });
  afterAll(async () => {
    await github.stop();
    await dropPrefix(redis, prefix);
    redis.disconnect();
    await rm(root, { recursive: true, force: true });
  });

  it("a 5xx of the git server keeps the change; the next attempt pushes the tested tree on the tested-on commit and opens the pull request", async () => {
    const store = pendingPublishes(redis, { prefix, name: "fix" });
    const { name, dir, cloneUrl, change, job, key } = await cloned();
    const draft = draftOf(submittedTrajectory("Added b."));
    github.pushFaults.failNext(owner, name, 1, 502);
    const push = pushAsApp({
      dir,
      change,
      keep: (unpushed) => store.save(key, { run: "octo-run-1", draft, unpushed }),
    });
    await expect(push).rejects.toMatchObject({ code: "git_push_failed", retryable: true });
    expect(github.pushFaults.failed).toBe(1);
    expect(await github.branches(owner, name)).not.toHaveProperty("agent-fix/issue-1");
    const kept = (await store.read(key)) as KeptChange;
    // Exactly what makes the commit again, and no credential.
    expect(kept).toEqual({ run: "octo-run-1", draft, unpushed: change });

    // The default branch moves on before the next attempt: the change still goes on the commit it was tested on.
    const moved = bare(name, "commit-tree", "main^{tree}", "-p", "main", "-m", "Someone else's commit");
    bare(name, "update-ref", "refs/heads/main", moved);
    const outcome = await resume({ job, cloneUrl, key }, kept, store);
    const [pull] = github.state.pulls.filter((p) => p.repo === name);
    expect(outcome).toMatchObject({ kind: "pull_request", number: pull?.number });
    expect(bare(name, "rev-parse", "agent-fix/issue-1^{tree}")).toBe(change.tree);
    expect(bare(name, "rev-parse", "agent-fix/issue-1^")).toBe(change.baseSha);
    expect(bare(name, "log", "-1", "--format=%an|%s|%b", "agent-fix/issue-1")).toBe(
      "agent-fix-test[bot]|a.txt needs b|Fixes #1",
    );
    // Published: nothing is left for another attempt.
    expect(await store.read(key)).toBeNull();
  });

  it("a change that cannot be kept (its Redis refuses) is logged on the job's logger, and the push error stands", async () => {
    // A store whose client refuses every command at once: Redis unreachable, nothing queued.
    const offline = new Redis(TEST_REDIS_URL, { lazyConnect: true, enableOfflineQueue: false });
    const store = pendingPublishes(offline, { prefix, name: "fix" });
    const lines: LogLine[] = [];
    const logger = capturingLogger(lines).child({ jobId: "fix-9-1" });
    const { name, dir, change, key } = await cloned();
    github.pushFaults.failNext(owner, name, 1, 502);
    const push = pushAsApp({
      dir,
      change,
      keep: (unpushed) => store.save(key, { run: "r", draft: draftOf(submittedTrajectory("x")), unpushed }),
      logger,
    });
    await expect(push).rejects.toMatchObject({ code: "git_push_failed", retryable: true });
    offline.disconnect();
    const lost = lines.filter((line) => line.msg === "the unpushed change could not be kept");
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ level: "error", jobId: "fix-9-1", err: { message: expect.any(String) } });
  });

  it("a push stopped by the worker shutting down keeps the change; one stopped by a cancel does not", async () => {
    const store = pendingPublishes(redis, { prefix, name: "fix" });
    for (const kind of ["shutdown", "cancelled"] as const) {
      const { name, dir, change, key } = await cloned();
      const held = github.pushFaults.hold(owner, name);
      const stop = new AbortController();
      const push = pushAsApp({
        dir,
        change,
        signal: stop.signal,
        keep: (unpushed) => store.save(key, { run: "r", draft: draftOf(submittedTrajectory("x")), unpushed }),
      });
      await held.arrived;
      stop.abort({ kind, by: "someone", reason: kind });
      await expect(push).rejects.toThrow();
      held.release();
      expect((await store.read(key))?.unpushed).toEqual(kind === "shutdown" ? change : undefined);
    }
  });
  it("a review run's push that landed after all (git's helper outlived the shutdown) is not pushed again", async () => {
    const store = pendingPublishes(redis, { prefix, name: "fix" });
    const { name, dir, cloneUrl, change, job, key } = await cloned();
    const review = { ...change, force: false, baseBranch: "agent-fix/issue-1" };
    // The branch as the review run found it, then the run's own commit landing on it.
    bare(name, "update-ref", "refs/heads/agent-fix/issue-1", change.baseSha);
    await pushAsApp({ dir, change: review });
    const landed = bare(name, "rev-parse", "agent-fix/issue-1");
    const outcome = resume(
      { job, cloneUrl, key },
      { run: "r", draft: draftOf(submittedTrajectory("Added b.")), unpushed: review },
      store,
    );
    await expect(outcome).resolves.toMatchObject({ kind: "pull_request" });
    expect(bare(name, "rev-parse", "agent-fix/issue-1")).toBe(landed);
  });
});
