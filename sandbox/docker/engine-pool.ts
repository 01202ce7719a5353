/**
 * A SandboxProvider over several Docker engines (other hosts', sandbox/docker/engines.ts): one
 * DockerSandboxProvider per engine, so each engine keeps its own prepared images, kept environments
 * and standbys. A run holds one engine (`forRun`): its sandboxes, its kept environment and its
 * repository's image are all that engine's. The engine is chosen by the fewest sandboxes running among
 * those that answer and have the sandbox image (checked at start, `checkEngines`); a run's retry
 * prefers the engine its job had, while it answers.
 *
 * An engine that goes away ends the run's calls on it within a bounded time, as a retryable
 * `docker_engine_lost` naming it, so the retry lands on another engine: a call failing the way a lost
 * engine fails (engine-fault.ts) is confirmed by a ping, and engines reached over a network are pinged
 * every few seconds, since a host that vanishes there never refuses a connection and a call to it would
 * wait for ever. Every call in flight on an engine found gone (a command, a copy, a build) ends at once.
 */
import { Readable } from "node:stream";
import type {
  KeepInput,
  PreparedEnvironments,
  RepoImageBuildSpec,
  Sandbox,
  SandboxCreateOptions,
  SandboxProvider,
} from "../../src/shared/contracts.js";
import { InfrastructureError } from "../../src/shared/errors.js";
import { engineFault } from "./engine-fault.js";
import type { DockerSandboxProvider } from "./provider.js";
import { removeSandboxResources } from "./remove.js";

interface PooledEngine {
  /** The engine's address without credentials (engines.ts), for logs and /healthz. */
  readonly name: string;
  readonly provider: DockerSandboxProvider;
  /** Reached over a network (engines.ts): pinged while the pool lives. */
  readonly remote?: boolean;
  /** The docker CLI's words that reach it (engines.ts), for the fix a message gives; default `docker`. */
  readonly cli?: string;
}

/** Whether the engine has the sandbox image: unknown until it answered a check. */
type ImageState = "present" | "missing" | "unknown";

interface EngineState extends PooledEngine {
  running: number;
  /** Whether the last ping, or a call the engine's loss failed, said it is gone. */
  down: boolean;
  image: ImageState;
  /** Ends every call in flight on the engine once it is found gone; a new one when it answers again. */
  loss: EngineLoss;
  /** Pings in a row the engine did not answer (the watch's). */
  missed: number;
  /** The sandboxes it held when it went: removed once it answers again (their containers stopped with it). */
  readonly leftovers: Set<string>;
}

/** What an engine's start-up check found (`checkEngines`). */
interface EngineCheck {
  name: string;
  up: boolean;
  image: ImageState;
  /** Why it is not usable, with the fix; absent when it is. */
  problem?: string;
}

interface EngineWatch {
  /** How often an engine reached over a network is pinged. */
  everyMs: number;
  /** How long a ping may take before it counts as missed. */
  timeoutMs: number;
  /** Missed pings in a row that make the engine gone. */
  misses: number;
}

/** A ping every 5 s, 5 s to answer, gone after two missed: a silent host is found within about 15 s. */
const DEFAULT_WATCH: EngineWatch = { everyMs: 5_000, timeoutMs: 5_000, misses: 2 };

/** The Sandbox contract's calls that go to the engine (dispose aside): those the engine's loss ends. */
const ENGINE_CALLS = new Set<string | symbol>([
  "exec",
  "readFile",
  "writeFile",
  "exportWorkspace",
  "setNetwork",
] satisfies (keyof Sandbox)[]);

/** How many runs' engine choices are remembered: a run's retry finds its engine, old runs are forgotten. */
const PINNED_RUNS = 1000;

/**
 * An engine's loss, told once to every call in flight on it. Listeners, not a promise the calls race:
 * a promise never settled would keep a reaction for every command ever run on a healthy engine.
 */
class EngineLoss {
  error: InfrastructureError | undefined;
  private readonly listeners = new Set<(error: InfrastructureError) => void>();

  fail(error: InfrastructureError): void {
    if (this.error) return;
    this.error = error;
    for (const listener of this.listeners) listener(error);
    this.listeners.clear();
  }

  /** Calls `listener` on the loss; the returned function stops that. */
  onLoss(listener: (error: InfrastructureError) => void): () => void {
    if (this.error) {
      listener(this.error);
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** `call`'s outcome, or the loss should it come first. */
  race<T>(call: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const stop = this.onLoss(reject);
      call.then(
        (value) => {
          stop();
          resolve(value);
        },
        (error: unknown) => {
          stop();
          reject(error);
        },
      );
    });
  }
}

/** `call`, or an error once `ms` have passed without its answer. */
function within<T>(ms: number, call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
}

export class DockerEnginePool implements SandboxProvider {
  readonly driver = "docker" as const;
  readonly engines: readonly EngineState[];
  private readonly pinned = new Map<string, EngineState>();
  /** The engine each sandbox of the pool runs on: kept environments are committed there. */
  private readonly homes = new WeakMap<Sandbox, EngineState>();
  private readonly watch: EngineWatch;
  private readonly timer: NodeJS.Timeout | undefined;
  /**
   * Whether calls are watched for the engine's loss: with several engines, or one over a network. This
   * host's engine alone refuses at once when it goes (engine-fault.ts words that), as without a pool.
   */
  private readonly guarded: boolean;

  constructor(
    engines: readonly PooledEngine[],
    private readonly log: (message: string) => void = () => {},
    watch: Partial<EngineWatch> = {},
  ) {
    if (engines.length === 0) throw new Error("DockerEnginePool needs at least one engine");
    this.engines = engines.map((engine) => ({
      ...engine,
      running: 0,
      down: false,
      image: "unknown" as ImageState,
      loss: new EngineLoss(),
      missed: 0,
      leftovers: new Set<string>(),
    }));
    this.watch = { ...DEFAULT_WATCH, ...watch };
    this.guarded = this.engines.length > 1 || this.engines.some((engine) => engine.remote);
    if (this.engines.some((engine) => engine.remote)) {
      this.timer = setInterval(() => void this.watchRemote(), this.watch.everyMs);
      this.timer.unref();
    }
  }

  /**
   * Kept environments and repository images outside a run: with one engine its own; with several none,
   * since such a call names no run to pin it to (a run's own, `forRun`, have them on its engine).
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
    const engine = this.engines.find((e) => !e.down && e.image !== "missing") ?? this.engines[0];
    return (engine as EngineState).provider.toolchains(image);
  };

  /**
   * The provider of one run (its job id): every call of it goes to the engine the run holds, chosen at
   * its first call and kept for the whole attempt, so the environment it keeps and the image it builds
   * are where its sandboxes run. Should that engine go, every call fails as its loss, and the run's
   * retry (a new attempt, a new `forRun`) holds another.
   */
  forRun(jobId: string): SandboxProvider {
    if (!this.guarded) return this;
    let held: Promise<EngineState> | undefined;
    let used = false;
    const engine = async (): Promise<EngineState> => {
      const current = held ? await held : undefined;
      // Nothing of the run on it yet: choose again rather than fail the attempt.
      if (current?.down && !used) held = undefined;
      held ??= this.engineFor(jobId);
      const chosen = await held;
      if (chosen.down) throw this.lossOf(chosen);
      used = true;
      return chosen;
    };
    const kept = this.engines[0]?.provider.environments !== undefined;
    const environments: PreparedEnvironments | undefined = kept
      ? {
          find: async (key, image) => {
            const on = await engine();
            return this.guard(on, () => (on.provider.environments as PreparedEnvironments).find(key, image));
          },
          workspace: async (environment) => {
            const on = await engine();
            return this.guard(on, () =>
              (on.provider.environments as PreparedEnvironments).workspace(environment),
            );
          },
          keep: async (sandbox: Sandbox, input: KeepInput) => {
            // Committed where the setup sandbox runs.
            const on = this.homes.get(sandbox) ?? (await engine());
            return this.guard(on, () =>
              (on.provider.environments as PreparedEnvironments).keep(sandbox, input),
            );
          },
        }
      : undefined;
    return {
      driver: "docker",
      create: async (options) => this.createOn(await engine(), options),
      environments,
      repoImage: async (build: RepoImageBuildSpec, signal?: AbortSignal) => {
        const on = await engine();
        return this.guard(on, () => on.provider.repoImage(build, signal));
      },
      toolchains: this.toolchains,
    };
  }

  /**
   * Each engine checked once, at the worker's start: it answers, and has the sandbox image. What is
   * wrong is logged with its fix (which engine, which image, the command that loads it); no run goes to
   * an engine without the image while another has it.
   */
  async checkEngines(): Promise<EngineCheck[]> {
    return Promise.all(
      this.engines.map(async (engine): Promise<EngineCheck> => {
        const why = await this.pingOnce(engine).then(
          () => undefined,
          (error: Error) => error.message,
        );
        if (why !== undefined) {
          const problem = `Docker engine ${engine.name} does not answer (${why}): no run goes to it until it does. Check its service there (systemctl status docker), the network to it, and the worker's credentials for it (tcp://: the certificates of AGENT_FIX_DOCKER_TLS_DIR; ssh://: the key in the ssh agent, and the host's key in known_hosts).`;
          this.markDown(engine, why, { quiet: true });
          this.log(problem);
          return { name: engine.name, up: false, image: engine.image, problem };
        }
        const up = true;
        await this.checkImage(engine);
        if (engine.image !== "missing") return { name: engine.name, up, image: engine.image };
        const problem = this.missingImage(engine);
        this.log(problem);
        return { name: engine.name, up, image: engine.image, problem };
      }),
    );
  }

  /** Pings every engine; one that does not answer is skipped until it does. */
  async ping(): Promise<{ name: string; up: boolean; error?: string }[]> {
    return Promise.all(
      this.engines.map(async (engine) => {
        try {
          await this.pingOnce(engine);
          this.cameBack(engine);
          return { name: engine.name, up: true };
        } catch (error) {
          this.markDown(engine, (error as Error).message);
          return { name: engine.name, up: false, error: (error as Error).message };
        }
      }),
    );
  }

  /** A sandbox on the engine `options.jobId`'s run is on (moving it when that one no longer answers). */
  async create(options: SandboxCreateOptions): Promise<Sandbox> {
    return this.createOn(await this.engineFor(options.jobId), options);
  }

  close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    return Promise.all(this.engines.map((engine) => engine.provider.close())).then(() => undefined);
  }

  private async createOn(engine: EngineState, options: SandboxCreateOptions): Promise<Sandbox> {
    engine.running += 1;
    let sandbox: Sandbox;
    try {
      const creating = engine.provider.create(options);
      sandbox = await this.guard(engine, () => creating).catch((error: unknown) => {
        creating.catch(() => undefined); // its own failure, after the loss's, is no news
        // Created after all on an engine given up on: removed once it answers again.
        if (engine.down) void creating.then((late) => engine.leftovers.add(late.id)).catch(() => undefined);
        throw error;
      });
    } catch (error) {
      engine.running -= 1;
      throw error;
    }
    let disposed = false;
    const dispose = async () => {
      if (!disposed) {
        disposed = true;
        engine.running -= 1;
      }
      // On an engine gone, its removal would wait for it: done once it answers again.
      if (engine.down) {
        engine.leftovers.add(sandbox.id);
        return;
      }
      if (!this.guarded) return sandbox.dispose();
      await engine.loss.race(sandbox.dispose()).catch(() => {
        if (engine.down) engine.leftovers.add(sandbox.id);
      });
    };
    const pool = this;
    const proxy = new Proxy(sandbox, {
      get(target, key) {
        if (key === "dispose") return dispose;
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        if (!pool.guarded || !ENGINE_CALLS.has(key)) return value.bind(target);
        // Each call ends with the engine's loss, at once, should the engine go while it runs.
        return (...args: unknown[]) =>
          pool.guard(engine, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
      },
    });
    this.homes.set(proxy, engine);
    return proxy;
  }

  /**
   * `call` on `engine`, ended by the engine's loss. A result that is a stream is watched too. A failure
   * that reads as the engine's (engine-fault.ts) names the engine, and marks it down when a ping confirms.
   */
  private async guard<T>(engine: EngineState, call: () => Promise<T>): Promise<T> {
    if (!this.guarded) return call();
    if (engine.down) throw this.lossOf(engine);
    try {
      const result = await engine.loss.race(call());
      return result instanceof Readable ? (this.guardStream(engine, result) as T) : result;
    } catch (error) {
      if (engine.loss.error) throw engine.loss.error;
      const fault = engineFault(error);
      if (!(fault instanceof InfrastructureError)) throw error;
      // The container alone may have gone (the engine answers): still the engine's doing, named.
      if (!(await this.answers(engine))) throw this.lossOf(engine);
      throw this.named(engine, fault);
    }
  }

  /** A stream from `engine` that errors with the engine's loss should the engine go while it flows. */
  private guardStream(engine: EngineState, stream: Readable): Readable {
    const stop = engine.loss.onLoss((error) => stream.destroy(error));
    stream.once("close", stop);
    return stream;
  }

  /** The run's engine: the one it started on while that answers, else the least busy one that answers. */
  private async engineFor(jobId: string): Promise<EngineState> {
    // One engine (this host's): no choice to make, and no ping on a sandbox's start-up path.
    if (this.engines.length === 1) return this.engines[0] as EngineState;
    const pinned = this.pinned.get(jobId);
    if (pinned && !pinned.down && pinned.image !== "missing" && (await this.answers(pinned))) return pinned;
    // Engines known to lack the image are asked again (the operator may have loaded it since).
    await Promise.all(
      this.engines.filter((e) => e.image === "missing" && !e.down).map((e) => this.checkImage(e)),
    );
    const candidates = [...this.engines].sort(
      (a, b) =>
        Number(a.down) - Number(b.down) ||
        Number(a.image === "missing") - Number(b.image === "missing") ||
        a.running - b.running,
    );
    // Without the image only when no engine has it: the run then fails saying how to build it.
    const withImage = candidates.filter((e) => e.image !== "missing");
    for (const engine of withImage.length > 0 ? withImage : candidates) {
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

  /** One ping, bounded: a host that vanished does not refuse, it never answers. */
  private pingOnce(engine: EngineState): Promise<unknown> {
    const docker = engine.provider.docker;
    // dockerode's ping takes an abortSignal (lib/docker.js), which its types leave out.
    const ping = docker.ping.bind(docker) as (options: { abortSignal: AbortSignal }) => Promise<unknown>;
    return ping({ abortSignal: AbortSignal.timeout(this.watch.timeoutMs) });
  }

  private async answers(engine: EngineState): Promise<boolean> {
    try {
      await this.pingOnce(engine);
      this.cameBack(engine);
      return true;
    } catch (error) {
      this.markDown(engine, (error as Error).message);
      return false;
    }
  }

  /** The engines reached over a network, pinged: gone after `misses` in a row, back on an answer. */
  private watching = false;
  private async watchRemote(): Promise<void> {
    if (this.watching) return;
    this.watching = true;
    try {
      await Promise.all(
        this.engines
          .filter((engine) => engine.remote)
          .map(async (engine) => {
            try {
              await this.pingOnce(engine);
              engine.missed = 0;
              this.cameBack(engine);
            } catch (error) {
              engine.missed += 1;
              if (engine.missed >= this.watch.misses)
                this.markDown(
                  engine,
                  `${engine.missed} pings in a row unanswered: ${(error as Error).message}`,
                );
            }
          }),
      );
    } finally {
      this.watching = false;
    }
  }

  /** Whether the sandbox image is on the engine; an unanswered question leaves it as it was. */
  private async checkImage(engine: EngineState): Promise<void> {
    const image = engine.provider.image;
    try {
      await within(this.watch.timeoutMs, engine.provider.docker.getImage(image).inspect());
      if (engine.image === "missing")
        this.log(`Docker engine ${engine.name} has the sandbox image ${image} now`);
      engine.image = "present";
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) engine.image = "missing";
    }
  }

  private missingImage(engine: EngineState): string {
    const image = engine.provider.image;
    const cli = engine.cli ?? "docker";
    return `Docker engine ${engine.name} lacks the sandbox image ${image}: no run goes to it while another engine has it. Load it from a host that has it: \`docker save ${image} | ${cli} load\`, or build it there (sandbox/image/build.sh).`;
  }

  /** An engine that answers again: usable, its loss renewed, what it held removed, its image asked again. */
  private cameBack(engine: EngineState): void {
    engine.missed = 0;
    if (!engine.down) return;
    engine.down = false;
    engine.loss = new EngineLoss();
    this.log(`Docker engine ${engine.name} answers again`);
    const leftovers = [...engine.leftovers];
    engine.leftovers.clear();
    void Promise.all(
      leftovers.map((id) => removeSandboxResources(engine.provider.docker, id, id).catch(() => undefined)),
    );
    void this.checkImage(engine);
  }

  private pin(jobId: string, engine: EngineState): void {
    this.pinned.delete(jobId);
    this.pinned.set(jobId, engine);
    if (this.pinned.size > PINNED_RUNS) {
      const oldest = this.pinned.keys().next().value;
      if (oldest !== undefined) this.pinned.delete(oldest);
    }
  }

  /** The engine is gone: skipped until it answers, and every call in flight on it ends now. */
  private markDown(engine: EngineState, why: string, { quiet = false } = {}): void {
    if (!engine.down && !quiet) this.log(`Docker engine ${engine.name} is skipped until it answers: ${why}`);
    engine.down = true;
    engine.loss.fail(
      new InfrastructureError(`The Docker engine ${engine.name} stopped answering during the run (${why})`, {
        code: "docker_engine_lost",
        hint: `The retry runs on another engine; should ${engine.name} stay away, check its service status, its log and the network to it.`,
      }),
    );
  }

  /** The loss of an engine already known to be gone. */
  private lossOf(engine: EngineState): InfrastructureError {
    if (!engine.loss.error) this.markDown(engine, "it does not answer");
    return engine.loss.error as InfrastructureError;
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
