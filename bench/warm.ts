/**
 * Warm start benchmark (`npm run bench:warm`): the real app server and worker against the GitHub
 * stand-in, the real Redis and Docker, a repository whose setup is `npm ci` of about 100 packages
 * (bench/fixtures/warm-npm) fetched from the npm registry. Ends with one JSON line.
 * - cold_s: job start (BullMQ's processedOn) to the agent's first step (the model stand-in's first
 *   request), with no kept environment: setup runs and its environment is kept.
 * - warm_s: the same on a second issue of the repository: setup is skipped (median of WARM_RUNS).
 * - docker_run_s: `docker run --rm IMAGE true` of the sandbox image, in the same run (median of 5).
 * - warm_ratio = warm / docker run (goal <= 1.2), warm_over_cold = warm / cold.
 * The model stand-in answers the first request with a 400, so each run ends there. Each run starts
 * SETTLE_MS after the one before has ended, as runs of one repository come minutes apart: the worker is
 * idle again (the sandboxes of the run before removed, a standby started: sandbox/docker/standby.ts).
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { SANDBOX_IMAGE } from "../sandbox/version.js";
import { startOpenAIStandIn } from "../test/support/openai-server.js";
import { requireRedis, requireSandboxImage } from "../test/support/services.js";
import { Stack } from "../test/support/stack.js";
import { filesOf, waitFor } from "../test/support/stack-parts.js";
import type { JobResult } from "../worker/run-end.js";

const run = promisify(execFile);
const WARM_RUNS = 3;
const SETTLE_MS = 5_000;
const STORE = `agent-fix-kept-bench-${process.pid}`;
const FIXTURE = join(import.meta.dirname, "fixtures/warm-npm");

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

/** The CA bundle the host trusts: the registry may sit behind a TLS-inspecting proxy (issue 13). */
async function hostCaBundle(): Promise<string> {
  return readFile(process.env.NODE_EXTRA_CA_CERTS ?? "/etc/ssl/certs/ca-certificates.crt", "utf8");
}

async function dockerRunSeconds(): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 6; i++) {
    const began = performance.now();
    await run("docker", ["run", "--rm", "--network", "none", SANDBOX_IMAGE, "true"]);
    if (i > 0) times.push((performance.now() - began) / 1000); // the first warms the engine's caches
  }
  return median(times);
}

/**
 * Where one run's time to the agent's first step went, in seconds: clone, prepare (a warm start's steps
 * under prepare_*), the agent's sandbox (its start-up phases under sandbox_*, milliseconds from its
 * create), and from the sandbox being ready to the first model request (the rest: the ACI's session,
 * the model client).
 */
function breakdown(timings: JobResult["timings"], total: number): Record<string, number> {
  const s = (ms: number | undefined) => round((ms ?? 0) / 1000);
  const steps: Record<string, number> = {
    clone_s: s(timings.clone),
    prepare_s: s(timings.setup),
  };
  for (const [key, ms] of Object.entries(timings)) {
    if (key.startsWith("start_")) steps[`${key.slice("start_".length)}_s`] = s(ms);
  }
  const accounted = (timings.clone ?? 0) + (timings.setup ?? 0) + (timings.start_agent_sandbox ?? 0);
  steps.after_sandbox_s = round(total - accounted / 1000);
  return steps;
}

async function main(): Promise<void> {
  if (!(await requireRedis()) || !(await requireSandboxImage())) process.exit(1);
  const openai = await startOpenAIStandIn();
  const stack = new Stack({
    model: null,
    env: {
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: "stand-in-key",
      AGENT_FIX_KEPT_ENVIRONMENTS_NAME: STORE,
      AGENT_FIX_JOB_ATTEMPTS: "1",
    },
    workerTuning: { keptEnvironments: { size: "20g" }, standby: { sandboxes: 2 } },
  });
  await stack.start();
  try {
    const config = [
      "setup:",
      "  commands:",
      "    - NODE_EXTRA_CA_CERTS=$PWD/.ca.pem npm ci --no-audit --no-fund --loglevel=error",
      "test:",
      "  command: node test.js",
    ].join("\n");
    const files = {
      ...(await filesOf(FIXTURE)),
      ".ca.pem": await hostCaBundle(),
      ".github/agent-fix.yml": `${config}\n`,
    };
    const repo = await stack.github.addRepo({
      owner: "octo",
      name: "warm-npm",
      files,
      permissions: { maintainer: "write" },
    });
    const sample = { owner: repo.owner, name: repo.name, id: repo.id, installationId: repo.installationId };
    const measure = async (): Promise<{
      seconds: number;
      status: string;
      steps: Record<string, number>;
    }> => {
      await sleep(SETTLE_MS);
      const issue = stack.addIssue(sample);
      const seen = openai.requests.length;
      await new Promise((r) => setTimeout(r, 5000));
      openai.enqueue({
        kind: "error",
        status: 400,
        message: "bench: the first step is all that is measured",
      });
      await stack.label(issue);
      const status = await waitFor("a final status", () => stack.finalStatus(issue), 900_000, 50);
      const request = openai.requests[seen];
      const jobId = `fix-${sample.id}-${issue.number}`;
      const job = await waitFor("the job's result", async () => {
        const found = await stack.app!.queue.queue.getJob(jobId);
        return found?.finishedOn ? found : undefined;
      });
      if (!request || !job?.processedOn) throw new Error(`the run never reached the agent:\n${status.body}`);
      return {
        seconds: (request.receivedAt - job.processedOn) / 1000,
        status: status.body,
        steps: breakdown(
          (job.returnvalue as JobResult | undefined)?.timings ?? {},
          (request.receivedAt - job.processedOn) / 1000,
        ),
      };
    };
    const cold = await measure();
    console.error(`cold ${cold.seconds.toFixed(2)} s: ${JSON.stringify(cold.steps)}`);
    const warm: number[] = [];
    let reused = "";
    for (let i = 0; i < WARM_RUNS; i++) {
      const result = await measure();
      warm.push(result.seconds);
      console.error(`warm ${result.seconds.toFixed(2)} s: ${JSON.stringify(result.steps)}`);
      reused = /reused the environment prepared at \S+/.exec(result.status)?.[0] ?? "";
    }
    if (!reused) throw new Error("the warm runs did not reuse the environment");
    const dockerRun = await dockerRunSeconds();
    const warmS = median(warm);
    console.error(
      `cold ${cold.seconds.toFixed(2)} s, warm ${warmS.toFixed(2)} s (${warm.map((s) => s.toFixed(2)).join(", ")}), docker run ${dockerRun.toFixed(2)} s; ${reused}`,
    );
    console.log(
      JSON.stringify({
        bench: "warm",
        cold_s: round(cold.seconds),
        warm_s: round(warmS),
        docker_run_s: round(dockerRun),
        warm_ratio: round(warmS / dockerRun),
        warm_over_cold: round(warmS / cold.seconds),
      }),
    );
  } finally {
    await stack.stop();
    await openai.close();
    const { stdout } = await run("docker", ["images", "-q", "--filter", `label=agent-fix.kept=${STORE}`]);
    const ids = [...new Set(stdout.split("\n").filter(Boolean))];
    if (ids.length > 0) await run("docker", ["rmi", "-f", ...ids]);
  }
}

await main();
