/**
 * The dependency rules of docs/architecture.md: worker -> src, worker -> sandbox, sandbox -> src/shared/contracts
 * only; the agent loop and its tools know nothing of GitHub, the queue or the run around them; the run
 * knows nothing of BullMQ, and the queue worker nothing of the run (worker/main.ts joins them).
 */
module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } },
    {
      name: "src-not-to-worker-or-sandbox",
      comment:
        "src/ is the webhook process and shared code; it must not import worker/ or sandbox/ (src/main.ts, the all-in-one process entry, excepted).",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/main\\.ts$" },
      to: { path: "^(worker|sandbox)/" },
    },
    {
      name: "server-only-to-its-process",
      comment:
        "src/server is the webhook process: the worker, the sandbox and what both processes share (src/shared) import nothing of it (src/main.ts, the all-in-one entry, starts it).",
      severity: "error",
      from: { path: "^(worker|sandbox|src/shared)/" },
      to: { path: "^src/server/" },
    },
    {
      name: "src-not-to-worker-config-or-github",
      comment:
        "worker/config and worker/github are the worker's own; no file of src/ (src/main.ts included) imports them. Code both processes use stays in src/.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^worker/(config|github)/" },
    },
    {
      name: "agent-loop-free-of-github-queue-run",
      comment:
        "worker/agent, worker/aci and worker/model run the agent loop against a sandbox: they import nothing of GitHub (src/shared/github, worker/github, @octokit/*, probot), the queue (src/shared/queue, worker/jobs, bullmq) or the run (worker/run). What they need from those is passed in (a Gate, a Sandbox, callbacks).",
      severity: "error",
      from: { path: "^worker/(agent|aci|model)/" },
      to: {
        path: "^(src/shared/github/|src/shared/queue/|src/server/signed-bodies\\.ts$|src/server/installation-runs\\.ts$|worker/github/|worker/jobs/|worker/run/)|(^|/)node_modules/(@octokit/|probot/|bullmq/)",
      },
    },
    {
      name: "run-free-of-bullmq",
      comment:
        "worker/run is the run of one job, from its issue to its pull request: it imports nothing of BullMQ (bullmq, worker/jobs). It is given a RunJob and returns a RunEnd (worker/run-end.ts); what the queue does with the job is worker/jobs' business.",
      severity: "error",
      from: { path: "^worker/run/" },
      to: { path: "^worker/jobs/|(^|/)node_modules/bullmq/" },
    },
    {
      name: "jobs-free-of-the-run",
      comment:
        "worker/jobs is everything BullMQ (locks, cancels, hand-back, lock loss, retries, admission, run records, abandoned jobs): it runs whatever processor it is given and imports nothing of worker/run. Only worker/main.ts, the composition root, knows both.",
      severity: "error",
      from: { path: "^worker/jobs/" },
      to: { path: "^worker/run/" },
    },
    {
      name: "bullmq-only-in-jobs",
      comment:
        "BullMQ is used by the queue worker (worker/jobs), the producer side both processes share (src/shared/queue), the dashboard and metrics that read the queue (src/), and the composition root; nowhere else in worker/.",
      severity: "error",
      from: { path: "^worker/", pathNot: "^worker/(jobs/|main\\.ts$)" },
      to: { path: "(^|/)node_modules/bullmq/" },
    },
    {
      name: "sandbox-only-to-contracts",
      comment:
        "sandbox/ may use src/shared/contracts.ts and src/shared/errors.ts, nothing else of src/, and nothing of worker/.",
      severity: "error",
      from: { path: "^sandbox/" },
      to: { path: "^(worker/|src/(?!shared/contracts\\.ts$|shared/errors\\.ts$))" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
      extensions: [".ts", ".js"],
    },
  },
};
