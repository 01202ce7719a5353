/**
 * `npm run demo`: the whole flow on this machine, no accounts needed. Starts a GitHub stand-in holding
 * a small repository with a real bug (textstats.median is wrong for an even number of values) and an
 * issue describing it, the real webhook server and a real worker (Docker sandbox, Redis queue), labels
 * the issue, and prints the draft pull request it opens and the trajectory summary.
 *
 * The agent replays a recorded trajectory (test/fixtures/replay/sample-median.jsonl), or uses the live
 * model when OPENAI_API_KEY is set (AGENT_FIX_DEMO_MODEL picks it, default openai:gpt-4.1).
 * Needs: Redis on 127.0.0.1:6379 (or REDIS_URL), the Docker engine, and the sandbox image.
 */
import { execFileSync } from "node:child_process";
import { pino } from "pino";
import { requireRedis, requireSandboxImage } from "./services.js";
import { Stack } from "./stack.js";
import { SAMPLE_REPLAY, waitFor } from "./stack-parts.js";

const bold = (text: string) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);
const rule = (title: string) =>
  console.log(`\n${bold(`── ${title} ${"─".repeat(Math.max(0, 70 - title.length))}`)}`);

async function main(): Promise<number> {
  if (!(await requireRedis()) || !(await requireSandboxImage())) {
    console.error(
      "\nThe demo needs Redis and the Docker engine running, and the sandbox image built:\n" +
        "  redis-server deploy/redis.conf --daemonize yes\n  dockerd &            (or: systemctl start docker)\n" +
        "  npm run sandbox:image\n(bash .ci/run does all three.)",
    );
    return 1;
  }
  const live = Boolean(process.env.OPENAI_API_KEY);
  const model = live ? (process.env.AGENT_FIX_DEMO_MODEL ?? "openai:gpt-4.1") : `replay:${SAMPLE_REPLAY}`;
  const stack = new Stack({
    model,
    appSlug: "agent-fix",
    // The worker's own lines, as text rather than pino's JSON.
    logger: pino({}, { write: (line: string) => console.log(`  [worker] ${JSON.parse(line).msg}`) }),
  });
  try {
    rule("Starting");
    await stack.start();
    console.log(`GitHub stand-in  ${stack.github.url}`);
    console.log(`agent-fix app    ${stack.app?.url} (webhooks at /api/github/webhooks)`);
    console.log(`worker           Docker sandboxes, queue ${stack.prefix} on Redis`);
    console.log(
      `model            ${live ? model : "replay of a recorded trajectory (set OPENAI_API_KEY for a live model)"}`,
    );

    const repo = await stack.addSampleRepo();
    const issue = stack.addIssue(repo);
    rule(`Issue #${issue.number} in ${issue.owner}/${issue.repo}`);
    console.log(`${bold(issue.title)}\n\n${issue.body}`);

    rule("Labelling the issue `agent-fix`");
    await stack.label(issue);
    let shown = "";
    const status = await waitFor(
      "the run to finish",
      () => {
        const comment = stack.statusComment(issue);
        const current = comment?.body.split("\n").find((line) => line.includes("⏳")) ?? "";
        if (current && current !== shown) {
          shown = current;
          console.log(`  status: ${current.replace(/^- \[.\] /, "").replace(/\*\*/g, "")}`);
        }
        return stack.finalStatus(issue);
      },
      live ? 1_800_000 : 300_000,
      200,
    );
    rule("Status comment on the issue");
    console.log(status.body.replace("<!-- agent-fix:status -->\n", ""));

    const pr = stack.pulls(issue)[0];
    if (!pr) {
      console.log("\nNo pull request was opened (see the status above).");
      return 1;
    }
    rule(`Draft pull request #${pr.number}: ${pr.title}`);
    console.log(
      `${pr.head} -> ${pr.base}, draft: ${pr.draft}, review requested from: ${pr.reviewRequests.join(", ")}\n`,
    );
    console.log(pr.body);
    rule("The change");
    const bare = stack.github.repoDir(issue.owner, issue.repo);
    console.log(
      execFileSync("git", ["--git-dir", bare, "log", "-1", "--format=commit %h by %an%n%n%B", pr.head], {
        encoding: "utf8",
      }).trim(),
    );
    console.log(
      execFileSync("git", ["--git-dir", bare, "diff", `${pr.base}..${pr.head}`], { encoding: "utf8" }),
    );
    const summary = stack.github.state.commentsOn(issue.owner, issue.repo, pr.number)[0];
    if (summary) {
      rule("Trajectory summary (comment on the pull request)");
      console.log(summary.body.replace("<!-- agent-fix:summary -->\n", ""));
    }
    return 0;
  } finally {
    await stack.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
