/**
 * Schema of the `repository:` section of config/default.yaml: what the operator lets a repository's
 * `.github/agent-fix.yml` choose. A repository may lower every limit but never raise one above its
 * ceiling, may name only the models listed here (or the operator's own `model.name`), and cannot lift
 * the operator's forbidden paths, which apply on top of its own.
 */
import { z } from "zod";
import { SANDBOX_RICH_IMAGE } from "../../sandbox/version.js";

export const repositoryPolicySchema = z.strictObject({
  /** Paths no change may touch, whatever the repository's `forbiddenPaths` says (its own are added). */
  forbiddenPaths: z.array(z.string().min(1)).default([".github/workflows/**", ".github/agent-fix.yml"]),
  /** Models a repository's `model:` may name beside `model.name`, e.g. `openai:gpt-4.1-mini`. */
  models: z.array(z.string().regex(/^(openai|replay):.+$/, "must look like openai:NAME")).default([]),
  /**
   * Images a repository may run in (`sandbox.image`, or its .devcontainer/devcontainer.json), as names or
   * glob patterns (`*` stops at `/`): `agent-fix-sandbox-rich:*`, `ghcr.io/my-org/**`. agent-fix's own by default.
   */
  images: z.array(z.string().min(1)).default(["agent-fix-sandbox:*", "agent-fix-sandbox-rich:*"]),
  /**
   * The image for a repository with no image of its own (no `sandbox.image`, no devcontainer) whose
   * detected parts need a toolchain, or a version of one, the default image lacks (Go, Rust, Ruby, Java;
   * a newer Node or Python: worker/pipeline/toolchain-choice.ts); used only when `images` allows it.
   * null: such repositories get the default image or an exact name of `images` that has it.
   */
  toolchainImage: z.string().min(1).nullable().default(SANDBOX_RICH_IMAGE),
  /** The highest value a repository may set for each limit; above it the run is refused, naming both. */
  ceilings: z
    .strictObject({
      maxSteps: z.number().int().positive().default(100),
      maxCostUsd: z.number().positive().default(10),
      maxTimeMinutes: z.number().positive().default(60),
      setupTimeoutSeconds: z.number().int().positive().default(1800),
      testTimeoutSeconds: z.number().int().positive().default(1800),
    })
    .prefault({}),
});
export type RepositoryPolicy = z.infer<typeof repositoryPolicySchema>;
export type Ceiling = keyof RepositoryPolicy["ceilings"];
