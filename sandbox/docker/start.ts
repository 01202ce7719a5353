/**
 * Starting one Docker sandbox from its plan (made by sandbox/docker/provider.ts): the container created with the
 * main process's stdin attached, started, the egress rules of a setup network applied, its three shells
 * attached, and the repository streamed in. Without a repository the sandbox is a standby: started, its
 * shells ready, its main process waiting for the repository (sandbox/docker/standby.ts).
 */
import type Docker from "dockerode";
import type { SandboxOrigin } from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";
import type { SessionSandboxSettings } from "../session-sandbox.js";
import { installJavaTrustStore } from "./ca-trust.js";
import { type CopyChannel, openCopyChannel } from "./copy.js";
import { applyEgressRules } from "./egress.js";
import type { FileShellBinaries } from "./exec.js";
import { removeSandboxResources } from "./remove.js";
import { DockerSandbox } from "./sandbox.js";
import { createError } from "./spec.js";

export interface SandboxPlan {
  name: string;
  /** The image asked for (recorded on the sandbox). */
  image: string;
  /** Where it came from (a kept environment's base image), for the trajectory: the image inspected while
   * the container is created. */
  origin: Promise<SandboxOrigin>;
  spec: Docker.ContainerCreateOptions;
  /** The setup network's name, or null for none. */
  network: string | null;
  /** iptables-restore input for the setup network's egress, applied before any command runs. */
  egressRules?: string | undefined;
  /** The CA bundle as a Java keystore, written before any command runs (a sandbox with network). */
  javaTrustStore?: Buffer | undefined;
  /** The agent shell's environment (KEY=value). */
  env: string[];
  rootShell: boolean;
  settings: SessionSandboxSettings;
  workspaceBytes: number;
  /** The image's execute-only copies, or (under gVisor, which cannot exec them) its own binaries. */
  fileShellBinaries: FileShellBinaries;
}

/** A started sandbox and its main process's stdin, where the repository goes in. */
export interface StartedSandbox {
  sandbox: DockerSandbox;
  channel: CopyChannel;
  dispose(): Promise<void>;
}

/**
 * Starts the sandbox; with `sourceDir`, it is copied in while the container starts. What needs no other
 * step goes at once: the image's inspection with the container's creation, the attach of the main
 * process's stdin with the start (its output comes only once stdin ends, so none is missed), the copy
 * with the shells' attach. The file shell attaches after "ready": no command needs it, and its exec
 * would otherwise take CPU from the copy on the start's critical path.
 */
export async function startSandbox(
  docker: Docker,
  plan: SandboxPlan,
  sourceDir: string | null,
): Promise<StartedSandbox> {
  const began = performance.now();
  const phases: Record<string, number> = {};
  const mark = (phase: string) => {
    phases[phase] = Math.round((performance.now() - began) * 10) / 10;
  };
  const [created, origin] = await Promise.allSettled([docker.createContainer(plan.spec), plan.origin]);
  if (created.status === "rejected") throw createError(plan.image, created.reason);
  const container = created.value;
  mark("container_created");
  if (origin.status === "rejected") {
    // The image went between the creation and its inspection.
    await removeSandboxResources(docker, container.id, plan.name).catch(() => undefined);
    throw startError(origin.reason);
  }
  const sandbox = new DockerSandbox(docker, container, {
    id: plan.name,
    image: plan.image,
    origin: origin.value,
    network: plan.network,
    env: plan.env,
    rootShell: plan.rootShell,
    settings: plan.settings,
    workspaceBytes: plan.workspaceBytes,
    fileShellBinaries: plan.fileShellBinaries,
  });
  try {
    const attached = openCopyChannel(docker, container).then((channel) => {
      mark("attached");
      return channel;
    });
    const copied =
      sourceDir === null
        ? undefined
        : attached.then((channel) => channel.send(sourceDir, () => mark("sent"))).then(() => mark("copied"));
    // Awaited below; should the start fail first (an engine gone), the copy's own failure that follows
    // must not go unhandled: it would end the worker process, and every run it holds with it.
    copied?.catch(() => undefined);
    const [channel] = await Promise.all([attached, container.start().then(() => mark("started"))]);
    // Before any command of setup can run: the rules of its network, in the sandbox's namespace.
    const rules = plan.egressRules
      ? applyEgressRules(container, plan.egressRules).then(() => mark("egress_rules"))
      : undefined;
    const keystore = plan.javaTrustStore
      ? installJavaTrustStore(container, plan.javaTrustStore).then(() => mark("java_truststore"))
      : undefined;
    await Promise.all([copied, sandbox.start(mark), rules, keystore]);
    mark("ready");
    sandbox.startupPhases = phases;
    sandbox.startFileShell();
    return { sandbox, channel, dispose: () => sandbox.dispose() };
  } catch (error) {
    // The start's error is the one to report; a container left behind is the reaper's.
    await sandbox.dispose().catch(() => undefined);
    throw startError(error);
  }
}

function startError(error: unknown): SandboxError {
  if (error instanceof SandboxError) return error;
  return new SandboxError(`cannot start the sandbox: ${(error as Error).message}`, {
    code: "sandbox_start_failed",
    retryable: true,
    cause: error,
  });
}
