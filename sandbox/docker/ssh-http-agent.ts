/**
 * The HTTP agent of an ssh:// engine (engines.ts): Docker API calls go through channels running `docker
 * system dial-stdio` (the command dockerode's own SSH transport runs, and the one an engine host's
 * authorized key may be restricted to), kept for the next call (HTTP keep-alive), over SSH connections
 * kept open and shared. dockerode's own transport (docker-modem lib/ssh.js) opens a connection, logs in
 * and starts `docker system dial-stdio` there for every call, which made a sandbox's start over SSH
 * twice as slow as over the engine's socket (bench:sandbox).
 *
 * sshd carries at most MaxSessions channels per connection (10 by default) and a sandbox holds some
 * for as long as it lives (its shells' attached streams), so a connection takes up to
 * CHANNELS_PER_CONNECTION and another is opened beside it when all are full. A connection with no
 * channel left is closed after IDLE_MS, and SSH keepalives end one whose host vanished, so the next
 * call connects afresh. The agent's destroy() ends them all.
 */
import http from "node:http";
import type { Duplex } from "node:stream";
import { Client, type ClientChannel, type ConnectConfig } from "ssh2";

/** Below sshd's default MaxSessions (10), with room for a call begun while another ends. */
const CHANNELS_PER_CONNECTION = 8;
/** An unused connection is closed this long after its last channel ended. */
const IDLE_MS = 60_000;
/**
 * A channel kept for the next call (HTTP keep-alive) is closed this long unused: a run's calls come
 * seconds apart, and a channel started anew costs a `docker system dial-stdio` start on the engine host.
 */
const FREE_MS = 30_000;
/** A keepalive every 5 s, three unanswered in a row end the connection: a vanished host is let go. */
const KEEPALIVE = { keepaliveInterval: 5_000, keepaliveCountMax: 3 };

interface Connection {
  readonly client: Client;
  readonly ready: Promise<void>;
  channels: number;
  closed: boolean;
  idle: NodeJS.Timeout | undefined;
}

/**
 * A channel as http's client handles a socket: it calls these on the sockets an agent gives it. TCP's
 * options mean nothing on a channel; `unref` is the agent putting it among its free sockets, where it is
 * closed after FREE_MS unused (its `docker system dial-stdio` ends with it), and `ref` taking it again.
 */
function asSocket(channel: ClientChannel): Duplex {
  const socket = channel as ClientChannel & Record<string, unknown>;
  let unused: NodeJS.Timeout | undefined;
  const self = () => socket;
  Object.assign(socket, {
    setKeepAlive: self,
    setNoDelay: self,
    setTimeout: self,
    unref: () => {
      clearTimeout(unused);
      unused = setTimeout(() => channel.destroy(), FREE_MS).unref();
      return socket;
    },
    ref: () => {
      clearTimeout(unused);
      return socket;
    },
  });
  channel.once("close", () => clearTimeout(unused));
  return socket;
}

/** An http.Agent whose connections are `docker system dial-stdio` channels over SSH to `config`'s host. */
export function sshHttpAgent(config: ConnectConfig): http.Agent {
  const connections = new Set<Connection>();
  const open = (): Connection => {
    const client = new Client();
    let settle: { resolve(): void; reject(error: Error): void } | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const connection: Connection = { client, ready, channels: 0, closed: false, idle: undefined };
    const drop = (error?: Error) => {
      connection.closed = true;
      connections.delete(connection);
      if (connection.idle) clearTimeout(connection.idle);
      settle?.reject(error ?? new Error("the SSH connection closed"));
    };
    client
      .once("ready", () => settle?.resolve())
      .on("error", (error) => drop(error))
      .once("close", () => drop());
    ready.catch(() => undefined); // each call waiting on it gets the error
    connections.add(connection);
    try {
      client.connect({ ...KEEPALIVE, ...config });
    } catch (error) {
      drop(error as Error); // a setting ssh2 refuses (an unreadable agent socket): each call gets it
    }
    return connection;
  };
  const release = (connection: Connection) => {
    connection.channels -= 1;
    if (connection.channels > 0 || connection.closed) return;
    connection.idle = setTimeout(() => connection.client.end(), IDLE_MS);
    connection.idle.unref();
  };
  // Keep-alive: a call reuses a channel a finished one left, and its `docker system dial-stdio` process
  // (starting one costs more than the call), as the docker CLI's own SSH transport does.
  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 4 });
  // http's Agent calls it with a callback and takes the socket from it (docker-modem's transport does the same).
  const createConnection = (_options: unknown, done: (error: Error | null, socket?: Duplex) => void) => {
    let connection = [...connections].find((c) => !c.closed && c.channels < CHANNELS_PER_CONNECTION);
    connection ??= open();
    const on = connection;
    on.channels += 1;
    if (on.idle) clearTimeout(on.idle);
    on.idle = undefined;
    const exec = () =>
      on.client.exec("docker system dial-stdio", (error, channel) => {
        if (error) {
          release(on);
          done(error);
          return;
        }
        channel.once("close", () => release(on));
        done(null, asSocket(channel));
      });
    on.ready.then(
      () => {
        try {
          exec();
        } catch (error) {
          // The connection ended between its readiness and this call.
          release(on);
          done(error as Error);
        }
      },
      (error: Error) => {
        release(on);
        done(error);
      },
    );
    return undefined;
  };
  (agent as unknown as { createConnection: typeof createConnection }).createConnection = createConnection;
  // The pool's close (provider.ts) ends the SSH connections too: a worker that stops leaves no session
  // open on the engine hosts, and no keepalive timer holding its event loop for IDLE_MS.
  const destroySockets = agent.destroy.bind(agent);
  agent.destroy = () => {
    destroySockets();
    for (const connection of connections) connection.client.end();
  };
  return agent;
}
