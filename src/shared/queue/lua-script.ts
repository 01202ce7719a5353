/**
 * A Lua script run by its SHA: ioredis's defineCommand sends EVAL once per connection, then EVALSHA
 * (and EVAL again should Redis answer NOSCRIPT, after a restart or SCRIPT FLUSH). The fairness scripts
 * run on every enqueue and every run's start: their text need not cross the wire each time.
 */
import type { Redis } from "ioredis";

type ScriptArg = string | number;

/** What a script is called with: its keys, then its arguments, as EVAL takes them. */
type LuaScript = (redis: Redis, keys: readonly string[], args: readonly ScriptArg[]) => Promise<unknown>;

/**
 * The script `lua` under `name` (a command name of its own on each client it runs on: distinct from
 * Redis's commands and BullMQ's, hence the prefix), with `keys` keys.
 */
export function luaScript(name: string, keys: number, lua: string): LuaScript {
  const command = `agentFix${name}`;
  return (redis, scriptKeys, args) => {
    if (scriptKeys.length !== keys)
      throw new Error(`the ${name} script takes ${keys} key(s), not ${scriptKeys.length}`);
    // Defined on first use per client: a client made anywhere (tests, the dashboard) gets it too.
    if (!(command in redis.scriptsSet)) redis.defineCommand(command, { numberOfKeys: keys, lua });
    const run = (redis as unknown as Record<string, (...values: ScriptArg[]) => Promise<unknown>>)[command];
    if (!run) throw new Error(`the ${name} script could not be defined on the Redis client`);
    return run.call(redis, ...scriptKeys, ...args);
  };
}
