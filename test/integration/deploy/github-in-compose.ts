/**
 * The GitHub stand-in inside docker-compose.yml's network, for compose.test.ts: run in a container of
 * the app's image with this repository mounted at /repo (`node --import tsx`). The stand-in listens on
 * the container's loopback; a pipe on port 8080 of every interface makes it `github:8080` to the
 * compose services. Its first line of output is the app's id and private key, as JSON.
 */
import { connect, createServer } from "node:net";
import { GitHubServer } from "../../support/github-server.js";

const github = await new GitHubServer().start();
const target = new URL(github.url);
createServer((client) => {
  const upstream = connect(Number(target.port), target.hostname);
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", close);
  upstream.on("error", close);
}).listen(8080, "0.0.0.0", () => {
  console.log(JSON.stringify({ appId: github.appId, privateKey: github.keys.privateKeyPem }));
});
process.on("SIGTERM", () => process.exit(0));
