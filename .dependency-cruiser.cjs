/**
 * The dependency rules of docs/architecture.md: worker -> src, worker -> sandbox, sandbox -> src/contracts
 * only; the agent loop and its tools know nothing of GitHub, the queue or the pipeline around them.
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
      name: "src-not-to-worker-config-or-github",
      comment:
        "worker/config and worker/github are the worker's own; no file of src/ (src/main.ts included) imports them. Code both processes use stays in src/.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^worker/(config|github)/" },
    },
    {
      name: "agent-loop-free-of-github-queue-pipeline",
      comment:
        "worker/agent, worker/aci and worker/model run the agent loop against a sandbox: they import nothing of GitHub (src/github, worker/github, @octokit/*, probot), the queue (src/queue, bullmq) or the pipeline (worker/pipeline). What they need from those is passed in (a Gate, a Sandbox, callbacks).",
      severity: "error",
      from: { path: "^worker/(agent|aci|model)/" },
      to: {
        path: "^(src/(github|queue)|worker/(github|pipeline))/|^node_modules/(@octokit/|probot/|bullmq/)",
      },
    },
    {
      name: "sandbox-only-to-contracts",
      comment:
        "sandbox/ may use src/contracts.ts and src/errors.ts, nothing else of src/, and nothing of worker/.",
      severity: "error",
      from: { path: "^sandbox/" },
      to: { path: "^(worker/|src/(?!contracts\\.ts$|errors\\.ts$))" },
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
