/**
 * Schema of the `repository:` section of config/default.yaml: what the operator lets a repository's
 * `.github/agent-fix.yml` choose. A repository may lower every limit but never raise one above its
 * ceiling, may name only the models listed here (or the operator's own `model.name`), and cannot lift
 * the operator's forbidden paths, which apply on top of its own.
 */
import { z } from "zod";
import { SANDBOX_RICH_IMAGE } from "../../sandbox/version.js";

export const repositoryPolicySchema = z
  .strictObject({
    forbiddenPaths: z
      .array(z.string().min(1))
      .default([".github/workflows/**", ".github/agent-fix.yml"])
      .describe(
        "Paths no change may touch, whatever the repository's `forbiddenPaths` says (its own are added).",
      ),
    models: z
      .array(z.string().regex(/^(openai|replay):.+$/, "must look like openai:NAME"))
      .default([])
      .describe("Models a repository's `model:` may name beside `model.name`, e.g. `openai:gpt-4.1-mini`."),
    images: z
      .array(z.string().min(1))
      .default(["agent-fix-sandbox:*", "agent-fix-sandbox-rich:*"])
      .describe(
        "Images a repository may run in (`sandbox.image`, or its .devcontainer/devcontainer.json), as names or glob patterns (`*` stops at `/`): `agent-fix-sandbox-rich:*`, `ghcr.io/my-org/**`. An exact name is also a candidate for repositories that name no image, chosen by the toolchain versions it holds.",
      ),
    toolchainImage: z
      .string()
      .min(1)
      .nullable()
      .default(SANDBOX_RICH_IMAGE)
      .describe(
        "The image for a repository with no image of its own whose detected parts need a toolchain, or a version of one, the default image lacks (Go, Rust, Ruby, Java; a newer Node or Python); used only when `images` allows it. null: such repositories get the default image or an exact name of `images` that has it.",
      ),
    ceilings: z
      .strictObject({
        maxSteps: z.number().int().positive().default(100).describe("Highest `limits.maxSteps`."),
        maxCostUsd: z.number().positive().default(10).describe("Highest `limits.maxCostUsd`."),
        maxTimeMinutes: z.number().positive().default(60).describe("Highest `limits.maxTimeMinutes`."),
        setupTimeoutSeconds: z
          .number()
          .int()
          .positive()
          .default(1800)
          .describe("Highest `setup.timeoutSeconds`."),
        testTimeoutSeconds: z
          .number()
          .int()
          .positive()
          .default(1800)
          .describe("Highest `test.timeoutSeconds`; also the top of a gate run's limit from the baseline."),
      })
      .prefault({})
      .describe(
        "The highest value a repository may set for each limit; above it the run is refused, naming both.",
      ),
  })
  .describe(
    "What a repository's .github/agent-fix.yml may choose: it may lower every limit but not raise one above its ceiling, name only the models listed here (or `model.name`), and not lift the operator's forbidden paths.",
  );
export type RepositoryPolicy = z.infer<typeof repositoryPolicySchema>;
export type Ceiling = keyof RepositoryPolicy["ceilings"];
