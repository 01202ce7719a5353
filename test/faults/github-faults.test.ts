/**
 * The GitHub stand-in failing each endpoint a run uses, in turn: the endpoints come from a recorded
 * run (webhook and worker, REST and git); then, for each endpoint and a fault (500, 502, a secondary
 * rate limit as 403 and as 429 with retry-after, GitHub's documented answer), the first request of a
 * run to that endpoint gets the fault. A run takes each endpoint once, the kinds dealt in turn from
 * an offset that rotates (test/support/sample.ts: by the hour, so every endpoint meets every kind
 * within four runs' hours); TEST_SAMPLE=all, or a change to this matrix's code, runs every kind on
 * every endpoint. A git fault gets a run of its own (it costs the job a retry); REST faults, which the
 * request's own retry absorbs, share runs, several endpoints to a run (`runsOf`). Every run must still
 * end with its pull request and a final status, within the job's retry budget (3 attempts, the
 * production default), and every fault be hit once. The runs go side by side, each in an installation
 * of its own so its faults hit only its run; the local sandbox, since the sandbox is not what is under
 * test here.
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

/** One endpoint's fault: the first request of a run to `endpoint` is answered with `kind`. */
interface Fault {
  endpoint: Endpoint;
  kind: FaultKind;
}

/** A run of its own issue and installation, and the faults injected into it. */
interface FaultRun {
  faults: Fault[];
  issue: IssueRef;
  inst: number;
  name: string;
}

const faultName = (fault: Fault) => `${fault.kind} on ${fault.endpoint.method} ${fault.endpoint.template}`;

/**
 * A fault on git's smart HTTP fails the fetch or the push, which the job retries (a whole attempt); a
 * fault on a REST endpoint is retried by the request itself (src/shared/github/request-retries.ts:
 * server errors after 1 s, secondary limits after their retry-after) and the run goes on.
 */
const costsJobRetry = (endpoint: Endpoint) => /\.git\/git-(upload|receive)-pack$/.test(endpoint.template);

/** How many REST faults share a run. */
const REST_FAULTS_PER_RUN = 6;

/**
 * The runs the faults go in: each git fault a run of its own (its job retry is the run's one, within
 * the budget of 3 attempts); the REST faults up to REST_FAULTS_PER_RUN to a run, on different endpoints.
 * A request's own retry absorbs each, so they do not meet: every fault must still be hit once and its
 * run end with its pull request, as when each had a run of its own. A run a fault took 94 s (69 s of
 * CPU) for the 25 faults of a slot at load 9-13; six runs take 41 s (22 s of CPU).
 */
function runsOf(faults: Fault[]): Fault[][] {
  const runs: Fault[][] = [];
  const shared: Fault[][] = [];
  for (const fault of faults) {
    if (costsJobRetry(fault.endpoint)) {
      runs.push([fault]);
      continue;
    }
    let run = shared.find(
      (r) => r.length < REST_FAULTS_PER_RUN && r.every((f) => f.endpoint !== fault.endpoint),
    );
    if (!run) {
      run = [];
      shared.push(run);
    }
    run.push(fault);
  }
  return [...runs, ...shared];
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
      const faults: Fault[] = [];
      for (const [i, endpoint] of endpoints.entries()) {
        for (const offset of offsets.run) {
          const kind = KINDS[(i + offset) % KINDS.length] as FaultKind;
          if (!only || only.test(`${kind} ${endpoint.method} ${endpoint.template}`))
            faults.push({ endpoint, kind });
        }
      }
      const runs: FaultRun[] = [];
      for (const [n, together] of runsOf(faults).entries()) {
        const name = `r${n}`;
        const { issue, inst } = await runIssue(name);
        for (const fault of together) inject(stack.github, fault.kind, fault.endpoint, name, inst);
        runs.push({ faults: together, issue, inst, name });
      }
      console.log(
        `[fault-runs] ${faults.length} faults in ${runs.length} runs: ` +
          runs.map((r) => `${r.name} ${r.faults.map(faultName).join(" + ")}`).join(" ; "),
      );
      const started = Date.now();
      // A run waits as long as the queue moves. Its deadline is not counted from the labelling: a
      // retried job goes to the back of the waiting list (BullMQ promotes a delayed job with LPUSH),
      // so the git faults, the only ones that cost a job retry, end last, once the whole matrix has
      // drained (64 cases at load 20-38 took over 30 min). A run fails when no run ended for
      // STALL_MS, which is what a stuck job looks like.
      let lastEnd = Date.now();
      const STALL_MS = 600_000;
      const perRun = await Promise.all(
        runs.map(async (r) => {
          const delivery = await stack.label(r.issue);
          const status = await waitFor(
            `${r.name} to end`,
            () => stack.finalStatus(r.issue) ?? (Date.now() - lastEnd > STALL_MS ? null : undefined),
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
              `${r.name}'s job to complete`,
              async () => (await queue?.getJobState(fixJobIdOf(r.issue))) === "completed",
            ).catch(() => undefined);
          }
          const retries = await jobRetries(stack, r.issue);
          const pulls = stack.pulls(r.issue).length;
          const done = status?.body.includes("opened draft pull request") ?? false;
          const line = status
            ? (status.body.split("\n").find((l) => /stopped|failed|opened/.test(l)) ?? "")
            : `no final status (status comment: ${stack.statusComment(r.issue) ? "not final" : "none"})`;
          return r.faults.map((fault) => {
            // The faults this run's installation met on this fault's endpoint.
            const path = pathPattern(fault.endpoint, r.name, r.inst);
            const hit = stack.github.state.requests.filter(
              (q) =>
                q.fault &&
                q.actor === `installation:${r.inst}` &&
                q.method === fault.endpoint.method &&
                path.test(q.path),
            ).length;
            reportFigure({
              fault: `GitHub ${faultName(fault)}`,
              outcome: done ? "pull request" : `no pull request: ${line.slice(0, 160)}`,
              recoverMs: Date.now() - started,
              jobRetries: retries,
              detail: `fault hit ${hit}x, delivery ${delivery}, in ${r.name} with ${r.faults.length - 1} other faults`,
            });
            return { ...fault, run: r.name, done, pulls, hit, line };
          });
        }),
      );
      const results = perRun.flat();
      const failures = results.filter((r) => !r.done || r.pulls !== 1 || r.hit !== 1);
      expect(
        failures.map((r) => `${faultName(r)} (in ${r.run}, hit ${r.hit}x, ${r.pulls} pulls): ${r.line}`),
      ).toEqual([]);
    },
    allKinds ? 3_600_000 : 1_500_000,
  );
  for (const title of offsets.skipped) it.skip(`kinds from ${title}`, () => {});
});
