/** Dependency direction of DESIGN.md: worker -> src, worker -> sandbox, sandbox -> src/contracts only. */
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
