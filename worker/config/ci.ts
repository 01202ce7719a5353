/**
 * Schema of the `ci:` section of config/default.yaml: what the app does when the repository's own CI
 * fails on the head commit of its pull request (a CI round, worker/run/ci-round.ts).
 */
import { z } from "zod";

/** Most CI rounds the operator may allow one pull request. */
export const CI_ROUNDS_CEILING = 10;

export const ciConfigSchema = z
  .strictObject({
    maxRounds: z
      .number()
      .int()
      .min(0)
      .max(CI_ROUNDS_CEILING)
      .default(2)
      .describe(
        "CI rounds at most per pull request: each gives the agent the failing checks and pushes a new commit; once they are used up the app says so once on the pull request. 0: failing checks start no round. A repository may set a lower number (`ci.maxRounds` in .github/agent-fix.yml).",
      ),
  })
  .describe(
    "Failing checks on the head commit of the app's own pull request (check runs, commit statuses, GitHub Actions workflow runs) start a fix round on its branch.",
  );
export type CiConfig = z.infer<typeof ciConfigSchema>;
