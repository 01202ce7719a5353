import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireRedis, requireSandboxImage } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { commentPayload, type IssueRef, labelPayload, waitFor } from "../support/stack-parts.js";

// Real Redis, real Docker sandboxes, the real app and worker; each repository's config names its replay.
const ready = (await requireRedis()) && (await requireSandboxImage());
const docker = new Docker();

/** Runs `command` as root in a container and returns its output (stdout and stderr). */
async function execIn(containerId: string, command: string): Promise<string> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: ["bash", "-c", command],
    User: "0",
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({});
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", resolve);
    stream.on("error", reject);
  });
  // Multiplexed frames: 8-byte headers around each payload.
  const raw = Buffer.concat(chunks);
  const out: Buffer[] = [];
  for (let i = 0; i + 8 <= raw.length; ) {
    const size = raw.readUInt32BE(i + 4);
    out.push(raw.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  return Buffer.concat(out).toString("utf8");
}

describe.runIf(ready)("end to end: what a maintainer sees", () => {
  const stack = new Stack({
    model: null,
    setupSecrets: { "octo/slow": { SETUP_ONLY: "yes" } },
  });
  const jobId = (issue: IssueRef) => `fix-${issue.repoId}-${issue.number}`;

  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  async function issueIn(name: string, files: Record<string, string>): Promise<IssueRef> {
    const repo = await stack.addSampleRepo(name, files);
    return stack.addIssue(repo);
  }

  it("a bad .github/agent-fix.yml ends the run with a comment naming the field, before any sandbox", async () => {
    const issue = await issueIn("bad-config", {
      ".github/agent-fix.yml": "test:\n  comand: python3 -m unittest\n",
    });
    await stack.label(issue);
    const status = await waitFor("a final status", () => stack.finalStatus(issue));
    expect(status.body).toContain("stopped without a pull request");
    expect(status.body).toContain("`comand`");
    expect(status.body).toContain("test:\n  command:");
    expect(stack.pulls(issue)).toEqual([]);
    expect(await stack.containers(jobId(issue))).toEqual([]);
  });

  it("the same delivery 10 times and the label toggled 5 times give one pull request", async () => {
    const issue = await issueIn("dedup", sampleConfig("sample-median.jsonl"));
    // One delivery: the same bytes, sent 10 times at once.
    stack.github.state.issue(issue.owner, issue.repo, issue.number)?.labels.push("agent-fix");
    const payload = labelPayload(issue, "labeled", "maintainer");
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () => stack.send("issues", payload, "delivery-dedup-1")),
    );
    // One is taken; a copy that comes while it is handled is answered 409, one after it 200.
    expect(statuses).toContain(200);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    for (let i = 0; i < 5; i++) {
      await stack.unlabel(issue);
      await stack.label(issue);
    }
    await waitFor(
      "a pull request and a final status",
      () =>
        stack.pulls(issue).length > 0 && stack.finalStatus(issue)?.body.includes("opened draft pull request"),
      150_000,
    );
    // Let any straggling run finish, then count.
    await waitFor("the queue to drain", async () => (await stack.app!.queue.queue.getActiveCount()) === 0);
    expect(stack.pulls(issue)).toHaveLength(1);
    expect(stack.finalStatus(issue)?.body).toContain("opened draft pull request");
  }, 180_000);

  it("tests already failing before any change stop the run with the setting to change", async () => {
    const issue = await issueIn("red", {
      ...sampleConfig("sample-median.jsonl"),
      "tests/test_broken.py":
        "import unittest\n\nclass Broken(unittest.TestCase):\n    def test_fails(self):\n        self.fail('red')\n",
    });
    await stack.label(issue);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 120_000);
    expect(status.body).toContain("already fail on main before any change");
    expect(status.body).toContain("openPullRequestWhenBaselineFails: true");
    expect(stack.pulls(issue)).toEqual([]);
  });

  it("a gate that never passes opens no pull request and says why", async () => {
    const issue = await issueIn("gate-fails", sampleConfig("sample-gate-fails.jsonl"));
    await stack.label(issue);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 180_000);
    expect(status.body).toContain("stopped without a pull request");
    expect(status.body).toMatch(/still failed on it/);
    expect(stack.pulls(issue)).toEqual([]);
    expect(Object.keys(await stack.github.branches(issue.owner, issue.repo))).toEqual(["main"]);
  });

  it("a change touching a forbidden path is never pushed", async () => {
    const issue = await issueIn("forbidden", {
      ...sampleConfig("sample-forbidden.jsonl"),
      ".github/workflows/ci.yml": "on: push\n",
    });
    await stack.label(issue);
    const status = await waitFor("a final status", () => stack.finalStatus(issue), 180_000);
    expect(status.body).toContain(".github/workflows/ci.yml");
    expect(status.body).toContain("Nothing was pushed");
    expect(stack.pulls(issue)).toEqual([]);
    expect(Object.keys(await stack.github.branches(issue.owner, issue.repo))).toEqual(["main"]);
    expect(stack.github.pushes.filter((p) => p.repo === issue.repo)).toEqual([]);
  });

  it("mid-run the container has no network and no token; removing the label cancels, removes it and says so", async () => {
    // Setup runs with network (and a setup secret); the agent's first step must find both gone.
    const issue = await issueIn(
      "slow",
      sampleConfig("sample-slow.jsonl", { setup: ['test "$SETUP_ONLY" = yes', "true"], network: true }),
    );
    await stack.label(issue);
    await waitFor("the agent's first step", () => stack.inPhase(issue, "Working on a fix"));
    // The baseline's sandbox is removed in the background once its tests ran: check a running one,
    // oldest first (the agent's sandbox is created just before the baseline's and outlives it).
    const [container] = await waitFor("a running sandbox of the run", async () => {
      const found = await stack.containers(jobId(issue));
      const states = await Promise.all(
        found.map((c) =>
          docker
            .getContainer(c.Id)
            .inspect()
            .catch(() => null),
        ),
      );
      const running = states
        .filter((state) => state?.State.Running && state.State.Status === "running")
        .sort((a, b) => (a!.Created < b!.Created ? -1 : 1));
      return running[0] ? [{ Id: running[0].Id }] : undefined;
    });
    // Every token the stand-in ever issued (the worker minted at least one to clone).
    const tokens = [...stack.github.state.tokens.keys()];
    expect(tokens.length).toBeGreaterThan(0);
    const inspect = await docker.getContainer(container!.Id).inspect();
    // Setup had network in a sandbox of its own, now removed; the agent's never had any.
    expect(inspect.HostConfig.NetworkMode).toBe("none");
    expect(Object.keys(inspect.NetworkSettings.Networks ?? {})).toEqual(["none"]);
    expect(await execIn(container!.Id, 'ls /sys/class/net; echo "[$SETUP_ONLY]"')).toBe("lo\n[]\n");
    const env = (inspect.Config.Env ?? []).join("\n");
    const processes = await execIn(container!.Id, "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'");
    // "def median" is a positive control: grep must find the sample's own file, and nothing else.
    const patterns = ["def median", ...tokens].map((t) => `-e '${t}'`).join(" ");
    const files = await execIn(
      container!.Id,
      `grep -rlsF ${patterns} /workspace /tmp /home /etc /root /run /var --exclude-dir=.git 2>/dev/null | sort`,
    );
    expect(processes).toContain("PATH=");
    for (const token of tokens) {
      expect(env).not.toContain(token);
      expect(processes).not.toContain(token);
    }
    expect(files.trim()).toBe("/workspace/textstats/stats.py");
    expect(await execIn(container!.Id, "git -C /workspace config --list")).not.toMatch(/extraheader|ghs_/i);

    await stack.unlabel(issue, "maintainer");
    const status = await waitFor("the cancelled status", () => stack.finalStatus(issue), 60_000);
    expect(status.body).toContain("cancelled by @maintainer");
    await waitFor(
      "the container to be removed",
      async () => (await stack.containers(jobId(issue))).length === 0,
      30_000,
    );
    expect(stack.pulls(issue)).toEqual([]);
  });

  it("a comment command from someone without write access is refused with a reply", async () => {
    const issue = await issueIn("outsider", sampleConfig("sample-median.jsonl"));
    expect(await stack.send("issue_comment", commentPayload(issue, "/agent-fix", "outsider"))).toBeLessThan(
      300,
    );
    const reply = await waitFor("a reply", () =>
      stack.github.state
        .commentsOn(issue.owner, issue.repo, issue.number)
        .find((c) => c.body.includes("@outsider")),
    );
    expect(reply.body).toContain("write access");
    expect(stack.statusComment(issue)).toBeUndefined();
    expect(await stack.app!.queue.queue.getJob(jobId(issue))).toBeUndefined();
  });
});
