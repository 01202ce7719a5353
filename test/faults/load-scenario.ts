/**
 * The load scenario of issue 15's fault list, shared by test/faults/load.test.ts (a smaller run for CI)
 * and bench/load.ts (the full one: 50 issues over 5 installations). The real app, worker processes
 * (`npm run start:worker` as children) on one Redis, the GitHub stand-in, the local sandbox driver and
 * a one-step replay model on a trivial repository, so the queue, not the pipeline, is what is measured.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Stack } from "../support/stack.js";
import type { IssueRef } from "../support/stack-parts.js";
import { FIXTURES, waitFor } from "../support/stack-parts.js";

interface LoadPlan {
  /** Issues labelled per installation; the last installation is the small one, labelled last. */
  issues: number[];
  workers: number;
  /** Jobs each worker process runs at once. */
  concurrency: number;
  /** The operator's per-installation runs at once. */
  runsAtOnce: number;
}

interface LoadFigures {
  wallMs: number;
  runs: number;
  /** Runs admitted (a slot taken): one per run when none ran twice. */
  admissions: number;
  /** Pull requests opened: one per issue when no run ran twice. */
  pullRequests: number;
  /** Issues whose final status is not a pull request. */
  notDone: number;
  /** The most runs of one installation holding a slot at once (from the workers' admission logs). */
  maxAtOnce: Record<number, number>;
  /** Where the small installation's first run was admitted among all admissions (0 = first). */
  smallStartIndex: number;
  /** Peak resident memory of each worker process (VmHWM), in MiB. */
  workerPeakMiB: number[];
}

const TRIVIAL_REPO = {
  "README.md": "A trivial repository for the load test.\n",
  ".github/agent-fix.yml": 'setup:\n  commands: []\ntest:\n  command: "true"\n',
};

/** The most intervals that overlap at one instant. */
function maxOverlap(intervals: [number, number][]): number {
  const edges = intervals.flatMap(([start, end]) => [
    [start, 1],
    [end, -1],
  ]);
  // Ends before starts at the same millisecond: a run that ended is not counted with the next.
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let most = 0;
  for (const [, step] of edges) {
    now += step ?? 0;
    most = Math.max(most, now);
  }
  return most;
}

async function peakMiB(child: ChildProcess): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, "utf8");
  return Math.round(Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024);
}

/** When a worker logged that a run took or gave back its installation's slot (worker/jobs/admission.ts). */
interface SlotEvent {
  msg: "run admitted" | "run slot released";
  jobId: string;
  installationId: number;
  time: number;
  /** When a release gave the slot back (its log line comes later, after parked runs are woken). */
  releasedAt?: number;
}

/** A worker process of the stack, resolved once it takes jobs; its slot events are collected. */
async function startWorkerProcess(stack: Stack, concurrency: number, events: SlotEvent[]) {
  const child = stack.spawnWorker({ AGENT_FIX_CONCURRENCY: String(concurrency), LOG_LEVEL: "info" });
  let ready = false;
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line.includes("taking jobs")) ready = true;
    if (!line.includes('"run admitted"') && !line.includes('"run slot released"')) return;
    events.push(JSON.parse(line) as SlotEvent);
  });
  child.stderr?.resume();
  await waitFor("a worker process to take jobs", () => ready, 120_000);
  return child;
}

/** Each run's time holding a slot, by installation: from its admission to its release. */
function slotIntervals(events: SlotEvent[]): Map<number, [number, number][]> {
  const byInstallation = new Map<number, [number, number][]>();
  const open = new Map<string, number>();
  const at = (event: SlotEvent) => event.releasedAt ?? event.time;
  for (const event of [...events].sort((a, b) => at(a) - at(b))) {
    if (event.msg === "run admitted") open.set(event.jobId, event.time);
    const start = open.get(event.jobId);
    if (event.msg !== "run slot released" || start === undefined) continue;
    open.delete(event.jobId);
    const list = byInstallation.get(event.installationId) ?? [];
    list.push([start, at(event)]);
    byInstallation.set(event.installationId, list);
  }
  return byInstallation;
}

export async function runLoad(plan: LoadPlan): Promise<LoadFigures> {
  const configDir = await mkdtemp(join(tmpdir(), "af-load-"));
  const overlay = join(configDir, "quotas.yml");
  const quotas = `quotas:\n  runsAtOnce: ${plan.runsAtOnce}\n  monthlyBudgetUsd: null\n  runsPerDayPerRepository: null\n`;
  await writeFile(overlay, quotas);
  const stack = new Stack({
    sandbox: "local",
    worker: false,
    model: `replay:${join(FIXTURES, "replay", "trivial-fix.jsonl")}`,
    env: { AGENT_FIX_CONFIG: overlay, AGENT_FIX_JOB_ATTEMPTS: "1" },
  });
  try {
    await stack.start();
    const issues: IssueRef[][] = [];
    for (const [i, count] of plan.issues.entries()) {
      const repo = await stack.github.addRepo({
        owner: `org${i + 1}`,
        name: "trivial",
        installationId: 101 + i,
        files: TRIVIAL_REPO,
        permissions: { maintainer: "write" },
      });
      const ref = { owner: repo.owner, name: repo.name, id: repo.id, installationId: repo.installationId };
      issues.push(
        Array.from({ length: count }, (_, n) =>
          stack.addIssue(ref, { title: `Add FIXED.txt (${n + 1})`, body: "Please add FIXED.txt." }),
        ),
      );
    }
    const events: SlotEvent[] = [];
    // Started together: each spends its start on imports and connecting, not on the others.
    const workers = await Promise.all(
      Array.from({ length: plan.workers }, () => startWorkerProcess(stack, plan.concurrency, events)),
    );
    const started = Date.now();
    // Labelled while the queue is paused, so "at once" holds however fast a run is: a trivial run
    // could otherwise end, and its installation's next run start, before the last label arrives.
    const queue = stack.app!.queue.queue;
    await queue.pause();
    await Promise.all(
      issues
        .slice(0, -1)
        .flat()
        .map((issue) => stack.label(issue)),
    );
    await Promise.all(issues.at(-1)!.map((issue) => stack.label(issue)));
    await queue.resume();
    const all = issues.flat();
    await waitFor("every run to end", () => all.every((issue) => stack.finalStatus(issue)), 1_800_000, 500);
    // The status is final before the run's cleanup: its job completes a moment later.
    const ended = () => stack.app!.queue.queue.getJobCountByTypes("completed", "failed");
    await waitFor("every job to complete", async () => (await ended()) >= all.length, 300_000, 500);
    const wallMs = Date.now() - started;
    const released = () => events.filter((e) => e.msg === "run slot released").length;
    await waitFor("the workers to log every release", () => released() >= all.length, 60_000);
    return {
      ...(await figures(stack, plan, all, slotIntervals(events))),
      wallMs,
      workerPeakMiB: await Promise.all(workers.map(peakMiB)),
    };
  } finally {
    await stack.stop();
    await rm(configDir, { recursive: true, force: true });
  }
}

async function figures(stack: Stack, plan: LoadPlan, all: IssueRef[], held: Map<number, [number, number][]>) {
  const jobs = (await stack.app!.queue.queue.getJobs(["completed", "failed"])).filter((j) => j !== undefined);
  const maxAtOnce: Record<number, number> = {};
  for (const [i] of plan.issues.entries()) {
    maxAtOnce[101 + i] = maxOverlap(held.get(101 + i) ?? []);
  }
  const starts = [...held.entries()].flatMap(([installation, list]) =>
    list.map(([at]) => ({ installation, at })),
  );
  starts.sort((a, b) => a.at - b.at);
  const small = 101 + plan.issues.length - 1;
  return {
    runs: jobs.length,
    admissions: starts.length,
    pullRequests: stack.github.state.pulls.length,
    notDone: all.filter((issue) => !stack.finalStatus(issue)?.body.includes("opened draft pull request"))
      .length,
    maxAtOnce,
    smallStartIndex: starts.findIndex((s) => s.installation === small),
  };
}
