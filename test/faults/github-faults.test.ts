/**
 * The GitHub stand-in failing each endpoint a run uses, in turn: the endpoints come from a recorded
 * run (webhook and worker, REST and git); then, for each endpoint and a fault (500, 502, a secondary
 * rate limit as 403 and as 429 with retry-after, GitHub's documented answer), one run whose first
 * request to that endpoint gets the fault. A run takes each endpoint once, the kinds dealt in turn from
 * an offset that rotates (test/support/sample.ts: by the hour, so every endpoint meets every kind
 * within four runs' hours); TEST_SAMPLE=all, or a change to this matrix's code, runs every kind on
 * every endpoint. Every run must still end with its pull request and a
 * final status, within the job's retry budget (3 attempts, the production default). The runs go side
 * by side, each in an installation of its own so a fault hits only its run; the local sandbox, since
 * the sandbox is not what is under test here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GitHubServer } from "../support/github-server.js";
import { sampleOf } from "../support/sample.js";
import { requireRedis } from "../support/services.js";
import { Stack, sampleConfig } from "../support/stack.js";
import { type IssueRef, waitFor } from "../support/stack-parts.js";
import { fixJobIdOf, jobRetries, reportFigure } from "./figures.js";

const ready = await requireRedis();
/** FAULT_CASES=REGEX: only the cases whose "KIND METHOD PATH" matches (to look into one). */
const only = process.env.FAULT_CASES ? new RegExp(process.env.FAULT_CASES) : undefined;

type FaultKind = "500" | "502" | "403 secondary" | "429 secondary";
const KINDS: FaultKind[] = ["500", "502", "403 secondary", "429 secondary"];
/** The offsets of the kinds dealt to the endpoints (endpoint i gets kind i + offset): one a run. */
const offsets = sampleOf(
  "GitHub fault kinds by endpoint",
  KINDS.map((_, offset) => offset),
  {
    perSlot: 1,
    name: (offset) => `offset ${offset} (the first endpoint gets ${KINDS[offset]})`,
    ownCode: ["test/faults/github-faults.test.ts", "test/support/github-server.ts", "src/shared/github/"],
  },
);
const allKinds = offsets.run.length === KINDS.length;

interface Endpoint {
  method: string;
  /** The recorded path with the repository as {repo}, the installation as {inst}, numbers as {n}. */
  template: string;
}

/** An endpoint's path as a pattern for the repository `repo` of installation `inst`. */
function pathPattern(endpoint: Endpoint, repo: string, inst: number): RegExp {
  const escaped = endpoint.template.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
  const source = escaped
    .replaceAll("{repo}", repo)
    .replaceAll("{inst}", String(inst))
    .replaceAll("{n}", "\\d+");
  return new RegExp(`^${source}$`);
}

/** Distinct endpoints of the requests a run of installation `inst` on `repo` made. */
function endpointsOf(github: GitHubServer, repo: string, inst: number): Endpoint[] {
  const seen = new Map<string, Endpoint>();
  for (const request of github.state.requests) {
    const ours =
      request.actor === `installation:${inst}` || request.path.startsWith(`/app/installations/${inst}/`);
    if (!ours) continue;
    const template = request.path
      .replace(`/octo/${repo}`, "/octo/{repo}")
      .replace(`/installations/${inst}/`, "/installations/{inst}/")
      .replace(/\/\d+(?=\/|$)/g, "/{n}");
    // Git's smart HTTP: a fetch or a push ends with a POST of its service.
    const git = { "GIT-FETCH": "git-upload-pack", "GIT-PUSH": "git-receive-pack" }[request.method];
    const method = git ? "POST" : request.method;
    const path = git ? `${template}/${git}` : template;
    seen.set(`${method} ${path}`, { method, template: path });
  }
  return [...seen.values()];
}

function inject(github: GitHubServer, kind: FaultKind, endpoint: Endpoint, repo: string, inst: number) {
  const path = pathPattern(endpoint, repo, inst);
  if (kind === "500" || kind === "502")
    github.failNext(endpoint.method, path, Number(kind), 1, { installationId: inst });
  else
    github.rateLimitNext(endpoint.method, path, {
      status: kind === "403 secondary" ? 403 : 429,
      retryAfterSeconds: 1,
      installationId: inst,
    });
}

describe.runIf(ready)("GitHub failing each endpoint of a run in turn", () => {
  const stack = new Stack({
    sandbox: "local",
    // The retry budget is production's (3 attempts); the wait before a retry is not what is proven.
    env: { AGENT_FIX_CONCURRENCY: "6", AGENT_FIX_JOB_ATTEMPTS: "3", AGENT_FIX_JOB_BACKOFF_SECONDS: "2" },
  });
  beforeAll(() => stack.start());
  afterAll(() => stack.stop());
  let installation = 100;

  async function runIssue(name: string) {
    const inst = ++installation;
    const files = sampleConfig("sample-median.jsonl");
    const repo = await stack.github.addRepo({
      owner: "octo",
      name,
      files: {
        ...(await import("../support/stack-parts.js").then((m) => m.filesOf(m.SAMPLE_REPO_DIR))),
        ...files,
      },
      installationId: inst,
      permissions: { maintainer: "write" },
    });
    const issue = stack.addIssue({ owner: "octo", name, id: repo.id, installationId: inst });
    return { issue, inst };
  }

  it(
    "every endpoint, every fault: the run ends with its pull request within the retry budget",
    async () => {
      const recorded = await runIssue("recorded");
      expect(await stack.label(recorded.issue)).toBe(200);
      await waitFor("the recorded run", () => stack.finalStatus(recorded.issue), 120_000);
      // Its last request, the tokens' revocation, comes after the final status.
      const queue = stack.app?.queue.queue;
      await waitFor(
        "the recorded job",
        async () => (await queue?.getJobState(fixJobIdOf(recorded.issue))) === "completed",
      );
      const endpoints = endpointsOf(stack.github, "recorded", recorded.inst);
      // The run reads the issue, comments, mints tokens, fetches and pushes, opens the pull request.
      expect(endpoints.map((e) => `${e.method} ${e.template}`)).toEqual(
        expect.arrayContaining([
          "POST /repos/octo/{repo}/pulls",
          "POST /app/installations/{inst}/access_tokens",
        ]),
      );

      console.log(`[fault-endpoints] ${endpoints.map((e) => `${e.method} ${e.template}`).join(" ; ")}`);

      // Each endpoint once per offset in this run's sample, the kinds in turn from it.
      const cases: { endpoint: Endpoint; kind: FaultKind; issue: IssueRef; inst: number; name: string }[] =
        [];
      for (const [i, endpoint] of endpoints.entries()) {
        const kinds = offsets.run.map((offset) => KINDS[(i + offset) % KINDS.length] as FaultKind);
        for (const kind of kinds) {
          if (only && !only.test(`${kind} ${endpoint.method} ${endpoint.template}`)) continue;
          const name = `f${i}-${kind.replace(/\W+/g, "")}`;
          const { issue, inst } = await runIssue(name);
          inject(stack.github, kind, endpoint, name, inst);
          cases.push({ endpoint, kind, issue, inst, name });
        }
      }
      const started = Date.now();
      // A case waits as long as the queue moves. Its deadline is not counted from the labelling: a
      // retried job goes to the back of the waiting list (BullMQ promotes a delayed job with LPUSH),
      // so the git faults, the only ones that cost a job retry, end last, once the whole matrix has
      // drained (64 cases at load 20-38 took over 30 min). A case fails when no case ended for
      // STALL_MS, which is what a stuck job looks like.
      let lastEnd = Date.now();
      const STALL_MS = 600_000;
      const results = await Promise.all(
        cases.map(async (c) => {
          const delivery = await stack.label(c.issue);
          const status = await waitFor(
            `${c.name} to end`,
            () => stack.finalStatus(c.issue) ?? (Date.now() - lastEnd > STALL_MS ? null : undefined),
            allKinds ? 3_000_000 : 1_200_000,
            500,
          ).then(
            (found) => found ?? undefined,
            () => undefined,
          );
          lastEnd = Date.now();
          // The tokens' revocation comes after the final status: count the faults once the job is over.
          if (status) {
            await waitFor(
              `${c.name}'s job to complete`,
              async () => (await queue?.getJobState(fixJobIdOf(c.issue))) === "completed",
            ).catch(() => undefined);
          }
          const faulted = stack.github.state.requests.filter(
            (r) => r.fault && r.actor === `installation:${c.inst}`,
          );
          const result = {
            ...c,
            delivery,
            pulls: stack.pulls(c.issue).length,
            done: status?.body.includes("opened draft pull request") ?? false,
            retries: await jobRetries(stack, c.issue),
            hit: faulted.length,
            line: status
              ? (status.body.split("\n").find((l) => /stopped|failed|opened/.test(l)) ?? "")
              : `no final status (status comment: ${stack.statusComment(c.issue) ? "not final" : "none"})`,
          };
          reportFigure({
            fault: `GitHub ${c.kind} on ${c.endpoint.method} ${c.endpoint.template}`,
            outcome: result.done ? "pull request" : `no pull request: ${result.line.slice(0, 160)}`,
            recoverMs: Date.now() - started,
            jobRetries: result.retries,
            detail: `fault hit ${result.hit}x, delivery ${delivery}`,
          });
          return result;
        }),
      );
      const failures = results.filter((r) => !r.done || r.pulls !== 1 || r.hit !== 1);
      expect(failures.map((r) => `${r.kind} ${r.endpoint.method} ${r.endpoint.template}: ${r.line}`)).toEqual(
        [],
      );
    },
    allKinds ? 3_600_000 : 1_500_000,
  );
  for (const title of offsets.skipped) it.skip(`kinds from ${title}`, () => {});
});
