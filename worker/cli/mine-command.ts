/** `agent-fix mine`: eval instances from a repository's merged pull requests (worker/eval/mine/). */
import { resolve } from "node:path";
import type { Command } from "commander";
import { ConfigError } from "../../src/errors.js";
import { abortOnInterrupt } from "../../src/process-signals.js";
import { loadConfig } from "../agent/config-file.js";
import { runMine } from "../eval/mine/mine.js";
import {
  checkoutImage,
  cliDockerSandboxes,
  collect,
  positiveInteger,
  print,
  type SetExitCode,
} from "./common.js";

interface MineCliOptions {
  since?: string;
  limit: number;
  out?: string;
  setup: string[];
  image?: string;
}

export function registerMineCommand(program: Command, setExitCode: SetExitCode): void {
  program
    .command("mine")
    .description("build eval instances from a repository's merged pull requests that fix an issue with tests")
    .argument("<owner/repo>", "the repository, on github.com or GHE_HOST; the token from GITHUB_TOKEN")
    .option("--since <date>", "only pull requests merged since this date")
    .option("--limit <n>", "instances to build at most, the most recently merged first", positiveInteger, 20)
    .option("--out <file>", "the instances, as JSON Lines (default OWNER__REPO.jsonl)")
    .option(
      "--setup <command>",
      "a setup command instead of the detected ones (repeatable)",
      collect,
      [] as string[],
    )
    .option(
      "--image <image>",
      "the Docker image the tests run in (default: chosen from each checkout as `agent-fix run` chooses it)",
    )
    .action(async (slug: string, options: MineCliOptions) => setExitCode(await mine(slug, options)));
}

async function mine(slug: string, options: MineCliOptions): Promise<number> {
  const [owner, repo, ...rest] = slug.split("/");
  if (!owner || !repo || rest.length > 0) {
    throw new ConfigError(`${slug}: expected OWNER/REPO`, { code: "mine_options_invalid" });
  }
  const since = options.since === undefined ? undefined : new Date(options.since);
  if (since && Number.isNaN(since.getTime())) {
    throw new ConfigError(`--since ${options.since}: not a date`, {
      code: "mine_options_invalid",
      hint: "Give a date as 2025-01-31 (or an ISO 8601 time).",
    });
  }
  const config = await loadConfig();
  const provider = cliDockerSandboxes(options.image ? { image: options.image } : {});
  const controller = new AbortController();
  const detach = abortOnInterrupt(controller, print);
  try {
    await runMine({
      owner,
      repo,
      since,
      limit: options.limit,
      out: resolve(options.out ?? `${owner}__${repo}.jsonl`),
      ...(options.setup.length ? { setup: options.setup } : {}),
      provider,
      ...(options.image ? {} : { imageFor: checkoutImage(provider, config.repository) }),
      print,
      signal: controller.signal,
    });
    return 0;
  } finally {
    detach();
  }
}
