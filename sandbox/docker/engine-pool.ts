/**
 * A SandboxProvider over several Docker engines (other hosts', sandbox/docker/engines.ts): one
 * DockerSandboxProvider per engine, so each engine keeps its own prepared images, kept environments
 * and standbys. A run's sandboxes all go to one engine (pinned by the job id), chosen by the fewest
 * sandboxes running among the engines that answered their last ping; an engine that fails a ping or
 * loses a sandbox is skipped until it answers again, so the run's retry (engine-fault.ts makes the
 * loss a retryable InfrastructureError) lands on another engine.
 */
import type { Sandbox, SandboxCreateOptions, SandboxProvider } from "../../src/shared/contracts.js";
import { InfrastructureError } from "../../src/shared/errors.js";
import { engineFault } from "./engine-fault.js";
import type { DockerSandboxProvider } from "./provider.js";

interface PooledEngine {
  /** The engine's address without credentials (engines.ts), for logs and /healthz. */
  readonly name: string;
  readonly provider: DockerSandboxProvider;
}

interface EngineState extends PooledEngine {
  running: number;
  /** Whether the last ping, or the last sandbox it lost, said it is gone. */
  down: boolean;
}

/** How many runs' engine choices are remembered: a run's retry finds its engine, old runs are forgotten. */
const PINNED_RUNS = 1000;

export class DockerEnginePool implements SandboxProvider {
  readonly driver = "docker" as const;
  readonly engines: readonly EngineState[];
  private readonly pinned = new Map<string, EngineState>();

  constructor(
    engines: readonly PooledEngine[],
    private readonly log: (message: string) => void = () => {},
  ) {
    if (engines.length === 0) throw new Error("DockerEnginePool needs at least one engine");
    this.engines = engines.map((engine) => ({ ...engine, running: 0, down: false }));
  }

  /**
   * Kept environments and repository images are per engine, and the contract gives their calls no run
   * to pin them by: with one engine they are its own, with several they are off (the run sets up each time).
   */
  get environments(): SandboxProvider["environments"] {
    return this.engines.length === 1 ? this.engines[0]?.provider.environments : undefined;
  }

  get repoImage(): SandboxProvider["repoImage"] {
    const only = this.engines.length === 1 ? this.engines[0]?.provider : undefined;
    return only ? (build, signal) => only.repoImage(build, signal) : undefined;
  }

  /** The same image gives the same versions on every engine: asked of one that is up. */
  toolchains: NonNullable<SandboxProvider["toolchains"]> = (image) => {
    const engine = this.engines.find((e) => !e.down) ?? this.engines[0];
    return (engine as EngineState).provider.toolchains(image);
  };

  /** Pings every engine; one that does not answer is skipped until it does. */
  async ping(): Promise<{ name: string; up: boolean; error?: string }[]> {
    return Promise.all(
      this.engines.map(async (engine) => {
        try {
          await engine.provider.docker.ping();
          if (engine.down) this.log(`Docker engine ${engine.name} answers again`);
          engine.down = false;
          return { name: engine.name, up: true };
        } catch (error) {
          this.markDown(engine, (error as Error).message);
          return { name: engine.name, up: false, error: (error as Error).message };
        }
      }),
    );
  }

  async create(options: SandboxCreateOptions): Promise<Sandbox> {
    const engine = await this.engineFor(options.jobId);
    engine.running += 1;
    let sandbox: Sandbox;
    try {
      sandbox = await engine.provider.create(options);
    } catch (error) {
      engine.running -= 1;
      const fault = engineFault(error);
      if (fault instanceof InfrastructureError) this.markDown(engine, fault.message);
      throw fault === error ? error : this.named(engine, fault as InfrastructureError);
    }
    let disposed = false;
    const dispose = async () => {
      if (!disposed) {
        disposed = true;
        engine.running -= 1;
      }
      return sandbox.dispose();
    };
    return new Proxy(sandbox, {
      get(target, key) {
        if (key === "dispose") return dispose;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  close(): Promise<void> {
    return Promise.all(this.engines.map((engine) => engine.provider.close())).then(() => undefined);
  }

  /** The run's engine: the one it started on while that answers, else the least busy one that answers. */
  private async engineFor(jobId: string): Promise<EngineState> {
    // One engine (this host's): no choice to make, and no ping on a sandbox's start-up path.
    if (this.engines.length === 1) return this.engines[0] as EngineState;
    const pinned = this.pinned.get(jobId);
    if (pinned && !pinned.down && (await this.answers(pinned))) return pinned;
    const candidates = [...this.engines].sort(
      (a, b) => Number(a.down) - Number(b.down) || a.running - b.running,
    );
    for (const engine of candidates) {
      if (!(await this.answers(engine))) continue;
      if (pinned && pinned !== engine)
        this.log(`run ${jobId} moves from Docker engine ${pinned.name} to ${engine.name}`);
      this.pin(jobId, engine);
      return engine;
    }
    throw new InfrastructureError(
      `No Docker engine answers (${this.engines.map((e) => e.name).join(", ")})`,
      {
        code: "docker_engine_lost",
        hint: "Check the engines of AGENT_FIX_DOCKER_HOSTS: their service status, the network to them and their TLS certificates.",
      },
    );
  }

  private async answers(engine: EngineState): Promise<boolean> {
    try {
      await engine.provider.docker.ping();
      if (engine.down) this.log(`Docker engine ${engine.name} answers again`);
      engine.down = false;
      return true;
    } catch (error) {
      this.markDown(engine, (error as Error).message);
      return false;
    }
  }

  private pin(jobId: string, engine: EngineState): void {
    this.pinned.delete(jobId);
    this.pinned.set(jobId, engine);
    if (this.pinned.size > PINNED_RUNS) {
      const oldest = this.pinned.keys().next().value;
      if (oldest !== undefined) this.pinned.delete(oldest);
    }
  }

  private markDown(engine: EngineState, why: string): void {
    if (!engine.down) this.log(`Docker engine ${engine.name} is skipped until it answers: ${why}`);
    engine.down = true;
  }

  /** The engine's loss, naming the engine (the run's status says which one went away). */
  private named(engine: EngineState, fault: InfrastructureError): InfrastructureError {
    return new InfrastructureError(
      fault.message.replace("The Docker engine on the worker", `The Docker engine ${engine.name}`),
      {
        code: "docker_engine_lost",
        hint: `The retry runs on another engine; should ${engine.name} stay away, check its service status and log.`,
        cause: fault.cause,
      },
    );
  }
}
