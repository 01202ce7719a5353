/** A TCP port on 127.0.0.1 that nothing listens on: the OS's pick, released again for the caller. */
import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 0;
}
