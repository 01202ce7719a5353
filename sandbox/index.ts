/**
 * Builds a SandboxProvider. Only composition roots (worker/processor.ts, worker/cli.ts, worker/index.ts,
 * tests) call this; everything else receives the `SandboxProvider` interface.
 *
 *   const provider = createSandboxProvider("docker", { limits: { memoryBytes: 4 * 1024 ** 3 } });
 *   const sandbox = await provider.create({ sourceDir, jobId });
 */
import type { SandboxProvider } from "../src/contracts.js";
import { DockerSandboxProvider, type DockerSandboxProviderOptions } from "./docker.js";
import { LocalSandboxProvider, type LocalSandboxProviderOptions } from "./local.js";

export type SandboxDriver = "docker" | "local";

export function createSandboxProvider(
  driver: "docker",
  options?: DockerSandboxProviderOptions,
): DockerSandboxProvider;
export function createSandboxProvider(
  driver: "local",
  options?: LocalSandboxProviderOptions,
): LocalSandboxProvider;
export function createSandboxProvider(
  driver: SandboxDriver,
  options?: DockerSandboxProviderOptions | LocalSandboxProviderOptions,
): SandboxProvider;
export function createSandboxProvider(
  driver: SandboxDriver,
  options: DockerSandboxProviderOptions | LocalSandboxProviderOptions = {},
): SandboxProvider {
  if (driver === "docker") return new DockerSandboxProvider(options as DockerSandboxProviderOptions);
  if (driver === "local") return new LocalSandboxProvider(options as LocalSandboxProviderOptions);
  throw new Error(`unknown sandbox driver: ${String(driver)} (docker or local)`);
}

export {
  DockerSandbox,
  DockerSandboxProvider,
  type DockerSandboxProviderOptions,
  LABEL,
  WORKDIR,
} from "./docker.js";
export { LocalSandbox, LocalSandboxProvider, type LocalSandboxProviderOptions } from "./local.js";
export { DEFAULT_REAP_MAX_AGE_MS, type ReapOptions, reapSandboxes, startReaper } from "./reaper.js";
export {
  SANDBOX_IMAGE,
  SANDBOX_IMAGE_VERSION,
  SANDBOX_RICH_IMAGE,
  SANDBOX_RICH_IMAGE_VERSION,
} from "./version.js";
