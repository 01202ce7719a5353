/**
 * Builds a SandboxProvider. Only composition roots (worker/main.ts, worker/cli.ts,
 * tests) call this; everything else receives the `SandboxProvider` interface.
 *
 *   const provider = createSandboxProvider("docker", { limits: { memoryBytes: 4 * 1024 ** 3 } });
 *   const sandbox = await provider.create({ sourceDir, jobId });
 */
import type { SandboxProvider } from "../src/shared/contracts.js";
import { DockerSandboxProvider, type DockerSandboxProviderOptions } from "./docker/provider.js";
import { LocalSandboxProvider, type LocalSandboxProviderOptions } from "./local.js";

type SandboxDriver = "docker" | "local";

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
